import assert from "node:assert/strict";
import { test } from "node:test";
import { createEmptyUsage } from "../canonical/index.js";
import { computeCostMicroUsd } from "./compute-cost.js";
import { convertMicroUsdToUsd } from "./money.js";
import type { ModelPrices } from "./prices.js";
import { convertUsdPerMillionToPicoPerToken } from "./prices.js";

// claude-sonnet-class prices: $3 in, $15 out, $0.30 cache read, $3.75 5-minute write, $6 1-hour write.
const prices: ModelPrices = {
  promptPicoUsd: convertUsdPerMillionToPicoPerToken("3"),
  completionPicoUsd: convertUsdPerMillionToPicoPerToken("15"),
  cachedPromptPicoUsd: convertUsdPerMillionToPicoPerToken("0.30"),
  cacheWritePicoUsd: convertUsdPerMillionToPicoPerToken("3.75"),
  cacheWrite1hPicoUsd: convertUsdPerMillionToPicoPerToken("6"),
};

test("prices convert exactly from USD per million to pico-USD per token", () => {
  assert.equal(convertUsdPerMillionToPicoPerToken("0.075"), 75_000n);
  assert.equal(convertUsdPerMillionToPicoPerToken(0.15), 150_000n);
  assert.equal(convertUsdPerMillionToPicoPerToken("1.25"), 1_250_000n);
  assert.equal(convertUsdPerMillionToPicoPerToken("0.000001"), 1n);
  assert.throws(() => convertUsdPerMillionToPicoPerToken("0.0000001"), /more than 6 decimals/);
  assert.throws(() => convertUsdPerMillionToPicoPerToken("-1"), /must not be negative/);
});

test("each token class is billed once at its rate", () => {
  const usage = {
    ...createEmptyUsage(),
    // Anthropic's prompt-cache golden: input 3 uncached + 1111 cache read + 418 cache write.
    inputTokens: 3 + 1111 + 418,
    cachedInputTokens: 1111,
    cacheWriteTokens: 418,
    outputTokens: 100,
  };
  // 3·3 + 1111·0.30 + 418·3.75 + 100·15 = 9 + 333.3 + 1567.5 + 1500 = 3409.8 µ$ → 3410
  assert.equal(computeCostMicroUsd(usage, prices), 3410);
});

test("1-hour cache writes are billed at the 1-hour rate", () => {
  const usage = { ...createEmptyUsage(), inputTokens: 1000, cacheWrite1hTokens: 1000 };
  assert.equal(computeCostMicroUsd(usage, prices), 6000);
});

test("inconsistent cache counts never bill a token twice", () => {
  const usage = { ...createEmptyUsage(), inputTokens: 10, cachedInputTokens: 50 };
  assert.equal(computeCostMicroUsd(usage, prices), 3); // 10 tokens at the cached rate, rounded up
});

test("zero usage costs zero and the display value is USD", () => {
  assert.equal(computeCostMicroUsd(createEmptyUsage(), prices), 0);
  assert.equal(convertMicroUsdToUsd(3410), 0.00341);
});
