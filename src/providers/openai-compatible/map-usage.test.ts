import assert from "node:assert/strict";
import { test } from "node:test";
import { mapUsage } from "./map-usage.js";

test("every counter of a modern usage object", () => {
  assert.deepEqual(
    mapUsage({
      prompt_tokens: 4020,
      completion_tokens: 238,
      total_tokens: 4258,
      prompt_tokens_details: { cached_tokens: 4012, cache_write_tokens: 5 },
      completion_tokens_details: { reasoning_tokens: 192 },
    }),
    {
      inputTokens: 4020,
      outputTokens: 238,
      cachedInputTokens: 4012,
      cacheWriteTokens: 5,
      cacheWrite1hTokens: 0,
      reasoningTokens: 192,
    },
  );
});

test("missing, null and nonsense counters are 0", () => {
  const zero = {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
  assert.deepEqual(mapUsage(undefined), zero);
  assert.deepEqual(mapUsage(null), zero);
  assert.deepEqual(
    mapUsage({ prompt_tokens: null, prompt_tokens_details: null, completion_tokens_details: null }),
    zero,
  );
  assert.deepEqual(mapUsage({ prompt_tokens: 9, completion_tokens: 2 }), {
    ...zero,
    inputTokens: 9,
    outputTokens: 2,
  });
  assert.deepEqual(mapUsage({ prompt_tokens: -3 as number, completion_tokens: Number.NaN }), zero);
});
