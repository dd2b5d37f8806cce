/**
 * Catalog prices: X USD per 1M tokens is X·10⁶ pico-USD per token, which has the same digits as X
 * written in micro-USD ("0.075" → 75 000), so the exact money parser does the conversion.
 */
import { tryParseUsdToMicroUsd } from "./money.js";

/** Integer pico-USD per token for each token class. */
export interface ModelPrices {
  promptPicoUsd: bigint;
  completionPicoUsd: bigint;
  cachedPromptPicoUsd: bigint;
  cacheWritePicoUsd: bigint;
  cacheWrite1hPicoUsd: bigint;
}

/** USD per 1M tokens → integer pico-USD per token. Throws with the reason on a bad value. */
export function convertUsdPerMillionToPicoPerToken(value: number | string): bigint {
  const result = tryParseUsdToMicroUsd(value);
  if (!result.ok) throw new Error(result.reason);
  return BigInt(result.microUsd);
}
