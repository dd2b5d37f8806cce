import assert from "node:assert/strict";
import { test } from "node:test";
import { type CanonicalUsage, createEmptyUsage } from "../canonical/index.js";
import { computeCostMicroUsd, computeRoundsCostMicroUsd } from "./compute-cost.js";
import {
  type ModelPrices,
  convertUsdPerMillionToPicoPerToken as price,
  selectPricesInForce,
  selectReachablePrices,
  selectTierPrices,
  type TokenPrices,
} from "./prices.js";

function tokenPrices(
  prompt: string,
  completion: string,
  cached: string,
  write: string,
  write1h: string,
): TokenPrices {
  return {
    promptPicoUsd: price(prompt),
    completionPicoUsd: price(completion),
    cachedPromptPicoUsd: price(cached),
    cacheWritePicoUsd: price(write),
    cacheWrite1hPicoUsd: price(write1h),
  };
}

// GPT-6.2 Sol as shipped: above 272,000 prompt tokens input and cache rates double, output 1.5×.
const SOL_LONG = tokenPrices("4", "15", "0.2", "5", "10");
const SOL: ModelPrices = Object.assign(tokenPrices("2", "10", "0.1", "2.5", "5"), {
  tiers: [{ abovePromptTokens: 272_000, prices: SOL_LONG }],
});

function usage(fields: Partial<CanonicalUsage>): CanonicalUsage {
  return Object.assign(createEmptyUsage(), fields);
}

test("a prompt of exactly the threshold is billed at the base prices; one token more, entirely at the tier's", () => {
  const atThreshold = usage({ inputTokens: 272_000, outputTokens: 1_000 });
  const above = usage({ inputTokens: 272_001, outputTokens: 1_000 });
  assert.equal(selectTierPrices(SOL, 272_000), SOL);
  assert.equal(selectTierPrices(SOL, 272_001), SOL_LONG);
  // 272,000 × $2/M + 1,000 × $10/M = 0.544 + 0.01 USD.
  assert.equal(computeCostMicroUsd(atThreshold, SOL), 554_000);
  // 272,001 × $4/M + 1,000 × $15/M = 1.088004 + 0.015 USD.
  assert.equal(computeCostMicroUsd(above, SOL), 1_103_004);
});

test("cache reads and writes count toward the tier and are billed at the tier's cache prices", () => {
  const cachedMostly = usage({
    inputTokens: 300_000,
    cachedInputTokens: 250_000,
    cacheWriteTokens: 40_000,
    cacheWrite1hTokens: 5_000,
    outputTokens: 100,
  });
  const expectedPico =
    5_000n * SOL_LONG.promptPicoUsd +
    250_000n * SOL_LONG.cachedPromptPicoUsd +
    40_000n * SOL_LONG.cacheWritePicoUsd +
    5_000n * SOL_LONG.cacheWrite1hPicoUsd +
    100n * SOL_LONG.completionPicoUsd;
  assert.equal(computeCostMicroUsd(cachedMostly, SOL), Number((expectedPico + 999_999n) / 1_000_000n));
});

test("each round of a generation is priced in its own tier, the sum rounded up once", () => {
  // Two upstream calls of 150,000 prompt tokens: 300,000 together, but each call is below 272K.
  const round = usage({ inputTokens: 150_000, outputTokens: 10 });
  assert.equal(computeRoundsCostMicroUsd([round, round], SOL), 2 * (300_000 + 100));
  assert.equal(computeRoundsCostMicroUsd([], SOL), 0);
});

test("the reservation's prices are the dearest of every tier the prompt bound reaches", () => {
  assert.deepEqual(selectReachablePrices(SOL, 272_000), tokenPrices("2", "10", "0.1", "2.5", "5"));
  assert.deepEqual(selectReachablePrices(SOL, 272_001), SOL_LONG);
  // A tier that lowers one price (no shipped model has one) never lowers what is reserved.
  const odd: ModelPrices = Object.assign(tokenPrices("2", "10", "0.1", "2.5", "5"), {
    tiers: [{ abovePromptTokens: 1_000, prices: tokenPrices("3", "8", "0.1", "2.5", "5") }],
  });
  const reachable = selectReachablePrices(odd, 5_000);
  assert.equal(reachable.promptPicoUsd, price("3"));
  assert.equal(reachable.completionPicoUsd, price("10"));
  assert.equal(selectTierPrices(odd, 5_000).completionPicoUsd, price("8"));
});

test("several tiers: the highest one the prompt passes applies", () => {
  const three: ModelPrices = Object.assign(tokenPrices("1", "1", "1", "1", "1"), {
    tiers: [
      { abovePromptTokens: 100, prices: tokenPrices("2", "2", "2", "2", "2") },
      { abovePromptTokens: 200, prices: tokenPrices("3", "3", "3", "3", "3") },
    ],
  });
  assert.equal(selectTierPrices(three, 100).promptPicoUsd, price("1"));
  assert.equal(selectTierPrices(three, 101).promptPicoUsd, price("2"));
  assert.equal(selectTierPrices(three, 200).promptPicoUsd, price("2"));
  assert.equal(selectTierPrices(three, 201).promptPicoUsd, price("3"));
});

test("a scheduled change replaces every price from its instant on", () => {
  const intro: ModelPrices = Object.assign(tokenPrices("0.75", "3.75", "0.075", "0.75", "0.75"), {
    scheduled: [
      { fromMs: Date.parse("2027-01-01T00:00:00Z"), prices: tokenPrices("1.5", "7.5", "0.15", "1.5", "1.5") },
    ],
  });
  const lastIntroMs = Date.parse("2026-12-31T23:59:59.999Z");
  assert.equal(selectPricesInForce(intro, lastIntroMs), intro);
  assert.equal(selectPricesInForce(intro, lastIntroMs + 1).promptPicoUsd, price("1.5"));
  const prompt = usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 });
  assert.equal(computeCostMicroUsd(prompt, selectPricesInForce(intro, lastIntroMs)), 4_500_000);
  assert.equal(computeCostMicroUsd(prompt, selectPricesInForce(intro, lastIntroMs + 1)), 9_000_000);
});
