import assert from "node:assert/strict";
import { test } from "node:test";
import { mapUsage } from "./map-usage.js";

test("thoughts count as output and reasoning; the total invariant holds", () => {
  // cached-content-usage.response.json
  const wire = {
    promptTokenCount: 17_713,
    candidatesTokenCount: 68,
    thoughtsTokenCount: 821,
    cachedContentTokenCount: 17_379,
    totalTokenCount: 18_602,
  };
  const usage = mapUsage(wire);
  assert.deepEqual(usage, {
    inputTokens: 17_713,
    outputTokens: 889,
    cachedInputTokens: 17_379,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 821,
  });
  assert.equal(usage.inputTokens + usage.outputTokens, wire.totalTokenCount);
});

test("tool-use prompt tokens are input: grounding stream totals add up", () => {
  const wire = {
    promptTokenCount: 17,
    candidatesTokenCount: 241,
    toolUsePromptTokenCount: 102,
    thoughtsTokenCount: 412,
    totalTokenCount: 772,
  };
  const usage = mapUsage(wire);
  assert.equal(usage.inputTokens, 119);
  assert.equal(usage.outputTokens, 653);
  assert.equal(usage.inputTokens + usage.outputTokens, wire.totalTokenCount);
});

test("missing counters are 0 (Gemini omits zeros)", () => {
  // finish-max-tokens-thinking-empty.response.json: no candidatesTokenCount
  const usage = mapUsage({ promptTokenCount: 15, thoughtsTokenCount: 2, totalTokenCount: 17 });
  assert.equal(usage.outputTokens, 2);
  assert.equal(usage.inputTokens + usage.outputTokens, 17);
  assert.deepEqual(mapUsage(undefined), mapUsage({}));
  assert.equal(mapUsage({ promptTokenCount: -3, candidatesTokenCount: Number.NaN }).inputTokens, 0);
});
