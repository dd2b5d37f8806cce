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

/**
 * SQLSTATE classes and codes that say the database cannot serve right now: connection exception
 * (08), insufficient resources such as too many connections (53), operator intervention such as a
 * shutdown or a restart in progress (57).
 */
const UNAVAILABLE_SQLSTATE_CLASSES = new Set(["08", "53", "57"]);
/** Errors of the clients themselves (pg, pg-pool, our worker and deadlines) that mean the same. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i,
  /the database worker (exited|is restarting)/i,
  /did not finish within \d+ ms/,
];
const UNAVAILABLE_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * The database could not be reached or did not answer in time: nothing about the statement, and
 * another attempt a little later may succeed. Errors of our own code (a GatewayError thrown inside
 * a transaction, a bug) are not this.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (UNAVAILABLE_NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_SQLSTATE_CLASSES.has(code.slice(0, 2));
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message === "string" && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)))
    return true;
  // AggregateError of a connect attempt to several addresses (localhost → ::1 and 127.0.0.1).
  const errors = (error as { errors?: unknown }).errors;
  return Array.isArray(errors) && errors.length > 0 && errors.every(isDatabaseUnavailableError);
}
