/**
 * Exact decimal → integer conversions for money. A price of X USD per 1M tokens is X·10⁶ pico-USD
 * per token, which has the same digits as X written in micro-units: "0.075" → 75 000.
 */

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses a non-negative decimal (string or number) with at most 6 fractional digits into millionths. */
export function parseDecimalMillionths(value: number | string): bigint {
  const text = typeof value === "number" ? formatPlainNumber(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new Error(`"${value}" is not a non-negative decimal number`);
  const fraction = match[2] ?? "";
  if (fraction.replace(/0+$/, "").length > 6) throw new Error(`"${value}" has more than 6 decimal places`);
  return BigInt(match[1]) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6) || "0");
}

/** USD per 1M tokens → integer pico-USD per token. */
export function convertUsdPerMillionToPicoPerToken(value: number | string): bigint {
  return parseDecimalMillionths(value);
}

function formatPlainNumber(value: number): string {
  if (!Number.isFinite(value) || value < 0) return String(value);
  // toString() would give "1e-7"; toFixed keeps a plain decimal, trimmed of trailing zeros.
  return value.toFixed(12).replace(/\.?0+$/, "");
}
