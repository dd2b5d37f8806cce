import { GatewayError } from "../errors/gateway-error.js";

/**
 * A generation ran past `limits.max_request_seconds` (streamed or not): it is stopped like an
 * upstream timeout, so its record is final before the sweep of interrupted requests would look.
 */
export function createDeadlineError(deadlineMs: number): GatewayError {
  return new GatewayError(
    "provider_timeout",
    `The generation ran longer than this gateway allows (${Math.round(deadlineMs / 1000)} s) and was stopped`,
  );
}
