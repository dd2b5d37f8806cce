/**
 * Tells apart failures that retrying cannot fix (the statement or its data is wrong) from those
 * that say nothing about the statement (the database is down, slow, restarting, out of
 * connections). Only the second kind may be parked and replayed.
 */

/** SQLSTATE classes about the statement itself: data exception, integrity, syntax or access rule. */
const PERMANENT_SQLSTATE_CLASSES = new Set(["22", "23", "42"]);

export function isPermanentDatabaseError(error: unknown): boolean {
  // Our own validation (e.g. a negative token count) fails the same way on every attempt.
  if (error instanceof RangeError) return true;
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // pg and PGlite carry SQLSTATE in `code`; Node's network errors carry names like ECONNREFUSED.
  return (
    typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && PERMANENT_SQLSTATE_CLASSES.has(code.slice(0, 2))
  );
}
