/**
 * One rule for a dependency outage, whichever dependency it is (docs/operations.md): a request that
 * needs the database or the limit store while it cannot be reached is answered at once (or within
 * the dependency's deadline) with `rate_limit_exceeded`, HTTP 429 and `Retry-After`: a retryable,
 * classified answer that official SDKs retry by themselves, never a slow 500. Spend stays bounded:
 * nothing is admitted that could not be checked.
 */
import { GatewayError } from "./gateway-error.js";

/** How long a caller should wait after a dependency outage answer. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** The database (PostgreSQL, or the embedded one) cannot be reached or did not answer in time. */
export function createDatabaseUnavailableError(cause: unknown): GatewayError {
  return new GatewayError(
    "rate_limit_exceeded",
    "The gateway's database cannot be reached right now, so the request could not be served; retry in a few seconds",
    { retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS, cause },
  );
}
