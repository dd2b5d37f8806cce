/**
 * Catalog prices: X USD per 1M tokens is X·10⁶ pico-USD per token, which has the same digits as X
 * written in micro-USD ("0.075" → 75 000), so the exact money parser does the conversion.
 *
 * A model may have price tiers by prompt size (docs/metering.md, "Price tiers"): a request whose
 * prompt tokens (cache reads and writes included, as every provider counts them for its tiers) are
 * more than a tier's threshold is billed entirely at that tier's prices, the way OpenAI, Anthropic
 * and Google bill their long-context rates.
 */
import { tryParseUsdToMicroUsd } from "./money.js";

/** Integer pico-USD per token for each token class. */
export interface TokenPrices {
  promptPicoUsd: bigint;
  completionPicoUsd: bigint;
  cachedPromptPicoUsd: bigint;
  /** Prompt-cache write at the provider's default retention (Anthropic 5 minutes, OpenAI 30 minutes). */
  cacheWritePicoUsd: bigint;
  /** Prompt-cache write at the provider's extended retention (Anthropic 1 hour, OpenAI 12 hours). */
  cacheWrite1hPicoUsd: bigint;
}

/** The prices of requests whose prompt has more than `abovePromptTokens` tokens. */
export interface PriceTier {
  abovePromptTokens: number;
  prices: TokenPrices;
}

export interface ModelPrices extends TokenPrices {
  /** Ascending by threshold; absent or empty: one price whatever the prompt's size. */
  tiers?: readonly PriceTier[];
  /** Announced price changes, ascending: each replaces every price from its instant on. */
  scheduled?: readonly ScheduledPrices[];
}

/** The prices in force from `fromMs` (epoch milliseconds, UTC) on. */
export interface ScheduledPrices {
  fromMs: number;
  prices: ModelPrices;
}

/** USD per 1M tokens → integer pico-USD per token. Throws with the reason on a bad value. */
export function convertUsdPerMillionToPicoPerToken(value: number | string): bigint {
  const result = tryParseUsdToMicroUsd(value);
  if (!result.ok) throw new Error(result.reason);
  return BigInt(result.microUsd);
}

/**
 * The prices in force at `atMs`: the last scheduled change that has begun, else the base prices.
 * A request is reserved and billed at the prices in force when it was admitted.
 */
export function selectPricesInForce(prices: ModelPrices, atMs: number): ModelPrices {
  let selected = prices;
  for (const change of prices.scheduled ?? []) {
    if (atMs >= change.fromMs) selected = change.prices;
  }
  return selected;
}

/** The prices a prompt of `promptTokens` tokens is billed at: its tier's, or the base prices. */
export function selectTierPrices(prices: ModelPrices, promptTokens: number): TokenPrices {
  let selected: TokenPrices = prices;
  for (const tier of prices.tiers ?? []) {
    if (promptTokens > tier.abovePromptTokens) selected = tier.prices;
  }
  return selected;
}

/**
 * The dearest price of each class over every tier a prompt of at most `promptTokensBound` tokens
 * can fall in: what a reservation holds, so it covers the bill whichever of them the reported
 * usage lands in (a tier is not assumed to cost more than the one below it).
 */
export function selectReachablePrices(prices: ModelPrices, promptTokensBound: number): TokenPrices {
  const reachable: TokenPrices = {
    promptPicoUsd: prices.promptPicoUsd,
    completionPicoUsd: prices.completionPicoUsd,
    cachedPromptPicoUsd: prices.cachedPromptPicoUsd,
    cacheWritePicoUsd: prices.cacheWritePicoUsd,
    cacheWrite1hPicoUsd: prices.cacheWrite1hPicoUsd,
  };
  for (const tier of prices.tiers ?? []) {
    if (!(promptTokensBound > tier.abovePromptTokens)) continue;
    for (const key of Object.keys(reachable) as Array<keyof TokenPrices>) {
      if (tier.prices[key] > reachable[key]) reachable[key] = tier.prices[key];
    }
  }
  return reachable;
}
