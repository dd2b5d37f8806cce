import assert from "node:assert/strict";
import { test } from "node:test";
import { ANTHROPIC_TEXT_BOUND } from "../../metering/text-token-bounds.js";
import { ANTHROPIC_INPUT_RULES, ANTHROPIC_MAX_IMAGE_TOKENS } from "./input-rules.js";

const tokens = (width: number, height: number) => ANTHROPIC_INPUT_RULES.imageTokens({ width, height });

test("Anthropic images: width × height / 750 after the downscale and padding to 28 px, never more than the largest", () => {
  // 1000×1000 pads to 1008×1008: 1,355 tokens (the published ~1,334 before padding).
  assert.equal(tokens(1_000, 1_000), Math.ceil((1_008 * 1_008) / 750));
  assert.equal(tokens(200, 200), Math.ceil((224 * 224) / 750));
  // Larger than the native resolution: scaled to 3.75 megapixels or a 2576-px edge first.
  for (const [width, height] of [
    [4_000, 3_000],
    [8_000, 8_000],
    [10_000, 100],
    [2_576, 1_456],
  ]) {
    const count = tokens(width, height);
    assert.ok(count <= ANTHROPIC_MAX_IMAGE_TOKENS, `${width}×${height}: ${count}`);
    assert.ok(count >= 1_000 || width === 10_000, `${width}×${height}: ${count}`);
  }
  assert.ok(ANTHROPIC_MAX_IMAGE_TOKENS >= 5_000 && ANTHROPIC_MAX_IMAGE_TOKENS < 5_200);
  // The largest really is the largest: no size gives more.
  for (let width = 50; width <= 9_000; width += 53) {
    for (let height = 50; height <= 9_000; height += 47) {
      assert.ok(tokens(width, height) <= ANTHROPIC_MAX_IMAGE_TOKENS, `${width}×${height}`);
    }
  }
  assert.equal(ANTHROPIC_INPUT_RULES.imageTokens(undefined), ANTHROPIC_MAX_IMAGE_TOKENS);
  assert.equal(ANTHROPIC_INPUT_RULES.tokenizer, ANTHROPIC_TEXT_BOUND);
});
