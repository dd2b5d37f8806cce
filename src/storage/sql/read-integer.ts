/**
 * The one place where database integers become JS numbers. pg returns BIGINT (and count(*)) as a
 * decimal string, PGlite as a number or, beyond 2^53, a BigInt. Money must stay exact, so anything
 * that is not a safe integer is an error rather than a silent rounding.
 */
export function readInteger(value: unknown, column = "value"): number {
  let result: number;
  if (typeof value === "number") result = value;
  else if (typeof value === "bigint") result = Number(value);
  else if (typeof value === "string" && /^-?\d+$/.test(value)) result = Number(value);
  else throw new TypeError(`${column}: expected an integer from the database, got ${typeof value}`);
  if (!Number.isSafeInteger(result)) {
    throw new RangeError(`${column}: ${String(value)} is outside the exact integer range of a JS number`);
  }
  return result;
}

export function readNullableInteger(value: unknown, column = "value"): number | null {
  return value === null || value === undefined ? null : readInteger(value, column);
}

/** Guards the write side: a fractional or unsafe amount must never reach a BIGINT column. */
export function assertSafeInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be a safe integer, got ${value}`);
}
