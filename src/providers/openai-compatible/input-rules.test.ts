import assert from "node:assert/strict";
import { test } from "node:test";
import { OPENAI_INPUT_RULES, OPENAI_MAX_IMAGE_TOKENS, UNKNOWN_HOST_INPUT_RULES } from "./input-rules.js";

test("OpenAI images: the larger of the tile and the patch schemes, at most 3,779 tokens", () => {
  const tokens = (width: number, height: number) => OPENAI_INPUT_RULES.imageTokens({ width, height });
  // 1024×1024: short side to 768 → 4 tiles (85 + 680); 32-px patches: 32² = 1,024, × 2.46.
  assert.equal(tokens(1_024, 1_024), Math.ceil(1_024 * 2.46));
  // 100×100: one tile (255); 16 patches × 2.46.
  assert.equal(tokens(100, 100), 255);
  assert.equal(tokens(8_000, 8_000), OPENAI_MAX_IMAGE_TOKENS);
  assert.equal(OPENAI_INPUT_RULES.imageTokens(undefined), OPENAI_MAX_IMAGE_TOKENS);
  assert.equal(OPENAI_INPUT_RULES.tokenizer, "o200k");
});

test("an unknown host: bytes for text, a token per 14×14 pixels, nothing bounds an image of unknown size", () => {
  assert.equal(UNKNOWN_HOST_INPUT_RULES.tokenizer, "bytes");
  assert.equal(UNKNOWN_HOST_INPUT_RULES.imageTokens({ width: 140, height: 140 }), 64 + 100);
  assert.equal(UNKNOWN_HOST_INPUT_RULES.imageTokens(undefined), Number.POSITIVE_INFINITY);
  assert.equal(UNKNOWN_HOST_INPUT_RULES.pdfPageTokens, Number.POSITIVE_INFINITY);
});
