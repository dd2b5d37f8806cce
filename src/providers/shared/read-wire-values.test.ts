import assert from "node:assert/strict";
import { test } from "node:test";
import { mapUsage as mapAnthropicUsage } from "../anthropic/map-usage.js";
import { mapUsage as mapGoogleUsage } from "../google/map-usage.js";
import { mapUsage as mapChatUsage } from "../openai-compatible/map-usage.js";
import { mapResponsesUsage } from "../openai-responses/map-usage.js";
import { MAX_TOKEN_COUNT, readRecords, readTokenCount } from "./read-wire-values.js";

test("a token count is a non-negative integer up to the cap; anything else is 0", () => {
  assert.equal(readTokenCount(12.9), 12);
  for (const value of [-5, 0, Number.NaN, Number.POSITIVE_INFINITY, "12", null, undefined, {}]) {
    assert.equal(readTokenCount(value), 0, String(value));
  }
  assert.equal(readTokenCount(1e308), MAX_TOKEN_COUNT);
  assert.equal(readTokenCount(2 ** 53 + 2), MAX_TOKEN_COUNT);
});

test("absurd reported usage still fits a usage record (32-bit counters), for every provider kind", () => {
  const huge = 1e308;
  const usages = [
    mapChatUsage({
      prompt_tokens: huge,
      completion_tokens: huge,
      prompt_tokens_details: { cached_tokens: huge },
    }),
    mapResponsesUsage({ input_tokens: huge, output_tokens: huge }),
    mapAnthropicUsage({
      input_tokens: huge,
      cache_read_input_tokens: huge,
      cache_creation: { ephemeral_5m_input_tokens: huge, ephemeral_1h_input_tokens: huge },
      output_tokens: huge,
    }),
    mapGoogleUsage({
      promptTokenCount: huge,
      toolUsePromptTokenCount: huge,
      candidatesTokenCount: huge,
      thoughtsTokenCount: huge,
    }),
  ];
  for (const usage of usages) {
    for (const [field, value] of Object.entries(usage)) {
      assert.ok(Number.isSafeInteger(value) && value <= 2_147_483_647, `${field} = ${value}`);
    }
  }
});

test("readRecords keeps the object entries of an array and nothing of anything else", () => {
  assert.deepEqual(readRecords([null, 1, "x", [], { a: 1 }]), [{ a: 1 }]);
  for (const value of [{}, "abc", 5, null, undefined]) assert.deepEqual(readRecords(value), []);
});
