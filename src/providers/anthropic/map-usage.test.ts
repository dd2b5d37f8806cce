import assert from "node:assert/strict";
import { test } from "node:test";
import { mapUsage, mergeUsage } from "./map-usage.js";

const zero = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};

test("golden: input 3 + cache read 1111 + cache creation 418 (5-minute), each token once", () => {
  // prompt-cache.2.response.json, recorded from the real API.
  assert.deepEqual(
    mapUsage({
      input_tokens: 3,
      cache_read_input_tokens: 1111,
      cache_creation_input_tokens: 418,
      cache_creation: { ephemeral_5m_input_tokens: 418, ephemeral_1h_input_tokens: 0 },
      output_tokens: 33,
    }),
    { ...zero, inputTokens: 1532, cachedInputTokens: 1111, cacheWriteTokens: 418, outputTokens: 33 },
  );
});

test("golden: 1-hour writes are kept apart from 5-minute writes", () => {
  assert.deepEqual(
    mapUsage({
      input_tokens: 12,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 1500,
      cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1000 },
      output_tokens: 80,
      output_tokens_details: { thinking_tokens: 30 },
    }),
    {
      inputTokens: 3512,
      outputTokens: 80,
      cachedInputTokens: 2000,
      cacheWriteTokens: 500,
      cacheWrite1hTokens: 1000,
      reasoningTokens: 30,
    },
  );
});

test("without the cache_creation split, all creation counts as 5-minute", () => {
  assert.deepEqual(mapUsage({ input_tokens: 5, cache_creation_input_tokens: 200, output_tokens: 1 }), {
    ...zero,
    inputTokens: 205,
    cacheWriteTokens: 200,
    outputTokens: 1,
  });
});

test("a split that disagrees with its total never bills a token twice", () => {
  const usage = mapUsage({
    input_tokens: 1,
    cache_creation_input_tokens: 100,
    cache_creation: { ephemeral_5m_input_tokens: 90, ephemeral_1h_input_tokens: 150 },
  });
  assert.equal(usage.cacheWrite1hTokens + usage.cacheWriteTokens, 100);
  assert.equal(usage.inputTokens, 101);
  // Only the split present: the total is the sum of the buckets.
  assert.deepEqual(
    mapUsage({ cache_creation: { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 3 } }),
    {
      ...zero,
      inputTokens: 10,
      cacheWriteTokens: 7,
      cacheWrite1hTokens: 3,
    },
  );
});

test("missing, null and nonsense counters are 0", () => {
  assert.deepEqual(mapUsage(undefined), zero);
  assert.deepEqual(mapUsage(null), zero);
  assert.deepEqual(
    mapUsage({
      input_tokens: null,
      output_tokens: Number.NaN,
      cache_creation: null,
      cache_read_input_tokens: -4,
      output_tokens_details: null,
    }),
    zero,
  );
});

test("streaming: delta counters are cumulative; the last value per field wins, start values fill gaps", () => {
  const start = {
    input_tokens: 472,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 1111,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: 1,
  };
  let usage = mergeUsage(undefined, start);
  usage = mergeUsage(usage, { output_tokens: 8 });
  usage = mergeUsage(usage, { output_tokens: 15, input_tokens: null });
  assert.deepEqual(mapUsage(usage), {
    ...zero,
    inputTokens: 1583,
    cachedInputTokens: 1111,
    outputTokens: 15,
  });

  // A relay (or a server-tool turn) reports final input counters only in the delta.
  usage = mergeUsage(usage, {
    input_tokens: 22_397,
    output_tokens: 20,
    cache_creation: { ephemeral_1h_input_tokens: 50 },
    cache_creation_input_tokens: 50,
    output_tokens_details: { thinking_tokens: 9 },
  });
  assert.deepEqual(mapUsage(usage), {
    inputTokens: 22_397 + 1111 + 50,
    outputTokens: 20,
    cachedInputTokens: 1111,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 50,
    reasoningTokens: 9,
  });
  assert.equal(mergeUsage(usage, null), usage);
});
