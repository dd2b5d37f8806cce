/**
 * Catalog prices: X USD per 1M tokens is X·10⁶ pico-USD per token, which has the same digits as X
 * written in micro-USD ("0.075" → 75 000), so the exact money parser does the conversion.
 */
import { tryParseUsdToMicroUsd } from "./money.js";

/** USD per 1M tokens → integer pico-USD per token. Throws with the reason on a bad value. */
export function convertUsdPerMillionToPicoPerToken(value: number | string): bigint {
  const result = tryParseUsdToMicroUsd(value);
  if (!result.ok) throw new Error(result.reason);
  return BigInt(result.microUsd);
}
