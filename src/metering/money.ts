/**
 * Decimal USD ↔ integer micro-USD, exactly: the conversion works on the decimal digits, never on a
 * binary float, so "0.000001" is 1 micro-USD and "0.1" + "0.2" can never drift. The one place money
 * text becomes an integer (config prices, admin amounts, bootstrap credit).
 */

export const MICRO_USD_PER_USD = 1_000_000;
const MICRO_DIGITS = 6;
// Sign, integer part, optional fraction, optional exponent (numbers such as 1e-6 stringify so).
const DECIMAL_PATTERN = /^(-)?(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export interface ParseUsdOptions {
  /** Default false: "-1" is refused. */
  allowNegative?: boolean;
  /** Default true. */
  allowZero?: boolean;
}

export type ParseUsdResult = { ok: true; microUsd: number } | { ok: false; reason: string };

export function tryParseUsdToMicroUsd(value: unknown, options: ParseUsdOptions = {}): ParseUsdResult {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { ok: false, reason: "must be a finite number" };
    text = String(value);
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    return { ok: false, reason: "must be a decimal number of USD" };
  }
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) return { ok: false, reason: `"${text}" is not a decimal number of USD (e.g. 12.5)` };
  const [, minus, integerDigits, fractionDigits = "", exponentText = "0"] = match;
  const exponent = Number(exponentText);
  // Shift the decimal point by the exponent on the digit string itself.
  let digits = integerDigits + fractionDigits;
  let pointPosition = integerDigits.length + exponent;
  if (Math.abs(exponent) > 40) return { ok: false, reason: `"${text}" is out of range` };
  if (pointPosition < 0) {
    digits = "0".repeat(-pointPosition) + digits;
    pointPosition = 0;
  }
  if (pointPosition > digits.length) digits += "0".repeat(pointPosition - digits.length);
  const wholePart = digits.slice(0, pointPosition) || "0";
  const fractionPart = digits.slice(pointPosition).replace(/0+$/, "");
  if (fractionPart.length > MICRO_DIGITS) {
    return {
      ok: false,
      reason: `"${text}" has more than ${MICRO_DIGITS} decimals (1 micro-USD is 0.000001)`,
    };
  }
  const magnitude = BigInt(wholePart) * 1_000_000n + BigInt(fractionPart.padEnd(MICRO_DIGITS, "0") || "0");
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: `"${text}" is too large` };
  const microUsd = Number(magnitude);
  if (microUsd === 0) {
    return options.allowZero === false
      ? { ok: false, reason: "must not be zero" }
      : { ok: true, microUsd: 0 };
  }
  if (minus && !options.allowNegative) return { ok: false, reason: `"${text}" must not be negative` };
  return { ok: true, microUsd: minus ? -microUsd : microUsd };
}

/** Exact decimal text of a micro-USD amount, trailing zeros trimmed: 1500000 → "1.5", 1 → "0.000001". */
export function formatMicroUsd(microUsd: number): string {
  const sign = microUsd < 0 ? "-" : "";
  const digits = String(Math.abs(microUsd)).padStart(MICRO_DIGITS + 1, "0");
  const whole = digits.slice(0, -MICRO_DIGITS);
  const fraction = digits.slice(-MICRO_DIGITS).replace(/0+$/, "");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** The number-of-USD view used on the wire (display only; the exact value travels as micro-USD). */
export function convertMicroUsdToUsd(microUsd: number): number {
  return microUsd / MICRO_USD_PER_USD;
}
