import assert from "node:assert/strict";
import { test } from "node:test";
import { TextPieces } from "./text-pieces.js";

test("text pieces: the text is every piece in order, across chunk boundaries", () => {
  for (const count of [0, 1, 511, 512, 513, 1_024, 1_500]) {
    const pieces = new TextPieces();
    let expected = "";
    for (let index = 0; index < count; index++) {
      const piece = `${index},é`;
      pieces.append(piece);
      expected += piece;
    }
    assert.equal(pieces.text(), expected, `${count} pieces`);
    assert.equal(pieces.length, expected.length);
  }
});
