import assert from "node:assert/strict";
import { test } from "node:test";
import { QuotedTexts, REUSED_TEXT_CHARS } from "./reuse-quoted-text.js";

test("a long text quoted once is spliced into later JSON as JSON.stringify writes it", () => {
  const long = `"quoted" \\ \n é 中 \ud83d\ude00 ${"x".repeat(REUSED_TEXT_CHARS)}`;
  const other = "y".repeat(REUSED_TEXT_CHARS + 1);
  const texts = new QuotedTexts();
  assert.equal(texts.quote(long), JSON.stringify(long));
  assert.equal(texts.quote("short"), '"short"');
  const value = {
    output: [{ content: [{ type: "output_text", text: long, annotations: [] }] }, { text: long }],
    other,
    short: "short",
    skipped: undefined,
  };
  assert.equal(texts.stringifyReusing(value), JSON.stringify(value));
  assert.equal(new QuotedTexts().stringifyReusing(value), JSON.stringify(value));
});
