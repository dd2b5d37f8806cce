/**
 * Readers for values in an upstream's JSON. The parsers treat every answer as untrusted input: a
 * relay or a broken host can put any JSON value anywhere, and parsing must end in a result or a
 * classified GatewayError, never in a TypeError (which would surface as a 500).
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The entries of `value` that are objects; none when it is not an array. */
export function readRecords<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value.filter(isRecord) as T[]) : [];
}

/**
 * The largest token count taken from an upstream. No answer comes near it; a host that reports
 * more is broken, and its usage must still fit a usage record (whose counters are 32-bit, and a
 * canonical count can be the sum of up to four reported ones).
 */
export const MAX_TOKEN_COUNT = 500_000_000;

/** A reported token count: a non-negative integer up to MAX_TOKEN_COUNT; anything else is 0. */
export function readTokenCount(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return 0;
  return Math.min(Math.floor(value), MAX_TOKEN_COUNT);
}
