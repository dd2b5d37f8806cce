/**
 * Cost of one generation in integer micro-USD: each token is billed once, at the rate of its
 * class in the price tier its prompt falls in, in BigInt pico-USD, then rounded up to whole
 * micro-USD.
 */
import type { CanonicalUsage } from "../canonical/index.js";
import { type ModelPrices, selectTierPrices } from "./prices.js";

const PICO_PER_MICRO = 1_000_000n;

export function computeCostMicroUsd(usage: CanonicalUsage, prices: ModelPrices): number {
  return roundUpToMicroUsd(computeCostPicoUsd(usage, prices));
}

/**
 * The cost of several upstream calls of one generation (the rounds of the tool loop): each call
 * is its own request to the provider, so each is priced in its own tier; rounded up once.
 */
export function computeRoundsCostMicroUsd(rounds: readonly CanonicalUsage[], prices: ModelPrices): number {
  let pico = 0n;
  for (const usage of rounds) pico += computeCostPicoUsd(usage, prices);
  return roundUpToMicroUsd(pico);
}

/** One upstream call's cost in pico-USD, unrounded. */
export function computeCostPicoUsd(usage: CanonicalUsage, prices: ModelPrices): bigint {
  // The tier follows the whole prompt: uncached input, cache reads and cache writes together.
  const rates = selectTierPrices(prices, usage.inputTokens);
  const cacheWrites = usage.cacheWriteTokens + usage.cacheWrite1hTokens;
  // Cache reads and writes are subsets of inputTokens; clamp so a provider that reports them
  // inconsistently can never make us bill a token twice.
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const writes = Math.min(cacheWrites, usage.inputTokens - cached);
  const write1h = Math.min(usage.cacheWrite1hTokens, writes);
  const uncached = usage.inputTokens - cached - writes;

  return (
    BigInt(uncached) * rates.promptPicoUsd +
    BigInt(cached) * rates.cachedPromptPicoUsd +
    BigInt(writes - write1h) * rates.cacheWritePicoUsd +
    BigInt(write1h) * rates.cacheWrite1hPicoUsd +
    BigInt(usage.outputTokens) * rates.completionPicoUsd
  );
}

function roundUpToMicroUsd(pico: bigint): number {
  return Number((pico + PICO_PER_MICRO - 1n) / PICO_PER_MICRO);
}
