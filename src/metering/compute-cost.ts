/**
 * Cost of one generation in integer micro-USD: each token is billed once, at the
 * rate of its class, in BigInt pico-USD, then rounded up to whole micro-USD.
 */
import type { CanonicalUsage } from "../canonical/index.js";
import type { ModelPrices } from "./prices.js";

const PICO_PER_MICRO = 1_000_000n;

export function computeCostMicroUsd(usage: CanonicalUsage, prices: ModelPrices): number {
  const cacheWrites = usage.cacheWriteTokens + usage.cacheWrite1hTokens;
  // Cache reads and writes are subsets of inputTokens; clamp so a provider that reports them
  // inconsistently can never make us bill a token twice.
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const writes = Math.min(cacheWrites, usage.inputTokens - cached);
  const write1h = Math.min(usage.cacheWrite1hTokens, writes);
  const uncached = usage.inputTokens - cached - writes;

  const pico =
    BigInt(uncached) * prices.promptPicoUsd +
    BigInt(cached) * prices.cachedPromptPicoUsd +
    BigInt(writes - write1h) * prices.cacheWritePicoUsd +
    BigInt(write1h) * prices.cacheWrite1hPicoUsd +
    BigInt(usage.outputTokens) * prices.completionPicoUsd;
  return Number((pico + PICO_PER_MICRO - 1n) / PICO_PER_MICRO);
}
