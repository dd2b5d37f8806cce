import assert from "node:assert/strict";
import { test } from "node:test";
import { createDroppedHeader, DROPPED_HEADER } from "./dropped-header.js";

test("entries are joined, printable ASCII kept, the rest and commas percent-encoded", () => {
  assert.deepEqual(createDroppedHeader([]), {});
  assert.deepEqual(createDroppedHeader(["tools[4](namespace)", "thinking.display", "a,b", "é\n"]), {
    [DROPPED_HEADER]: "tools[4](namespace), thinking.display, a%2Cb, %C3%A9%0A",
  });
});

test("a lone surrogate, the caller's or left by the cut, is U+FFFD, not a failed answer", () => {
  // encodeURIComponent throws on a lone surrogate: the answer failed with a 500 after it was billed.
  const cutInPair = `${"a".repeat(127)}😀`;
  const header = createDroppedHeader(["tools[0](\udc00)", cutInPair])[DROPPED_HEADER];
  assert.equal(header, `tools[0](%EF%BF%BD), ${"a".repeat(127)}%EF%BF%BD%E2%80%A6`);
});
