/**
 * What a caller is told at each limit (docs/limits.md quotes these). Each message names the limit,
 * its amount, and when it resets, so the caller knows whether waiting helps.
 */
import { DEPENDENCY_RETRY_AFTER_SECONDS } from "../errors/dependency-errors.js";
import { GatewayError } from "../errors/gateway-error.js";
import { formatMicroUsd } from "../metering/money.js";
import type { CounterName } from "./limit-counters.js";
import type { LimitWindows } from "./limit-windows.js";

/** How long a caller should wait when the limit store cannot be reached (the database's too). */
export const LIMIT_STORE_RETRY_AFTER_SECONDS = DEPENDENCY_RETRY_AFTER_SECONDS;

function usd(microUsd: number): string {
  return `$${formatMicroUsd(Math.max(0, microUsd))}`;
}

function describeReset(counter: Exclude<CounterName, "balance">, windows: LimitWindows): string {
  if (counter === "total") return "It does not reset by itself; an admin can raise or reset it.";
  const at = new Date(counter === "daily" ? windows.daily.endMs! : windows.monthly.endMs!).toISOString();
  return `It resets at ${at} (00:00 UTC${counter === "monthly" ? " on the 1st" : ""}).`;
}

export function createKeyLimitError(input: {
  counter: Exclude<CounterName, "balance">;
  limitMicroUsd: number;
  headroomMicroUsd: number;
  amountMicroUsd: number;
  windows: LimitWindows;
}): GatewayError {
  const { counter, limitMicroUsd, headroomMicroUsd } = input;
  const reset = describeReset(counter, input.windows);
  const message =
    headroomMicroUsd <= 0
      ? `This API key's ${counter} spend limit of ${usd(limitMicroUsd)} is reached. ${reset}`
      : `This API key's ${counter} spend limit of ${usd(limitMicroUsd)} is nearly reached: ` +
        `${usd(headroomMicroUsd)} is left (requests in flight count against it), but this request ` +
        `may cost up to ${usd(input.amountMicroUsd)}. Lower max_tokens, or wait. ${reset}`;
  return new GatewayError("key_limit_exceeded", message);
}

export function createInsufficientCreditsError(
  headroomMicroUsd: number,
  amountMicroUsd: number,
): GatewayError {
  const message =
    headroomMicroUsd <= 0
      ? "The workspace has no credit left for this request (requests in flight count against the " +
        "balance); add credits to continue"
      : `This request may cost up to ${usd(amountMicroUsd)}, more than the workspace's available ` +
        `credit of ${usd(headroomMicroUsd)} (balance minus requests in flight). Add credits or lower max_tokens`;
  return new GatewayError("insufficient_credits", message);
}

export function createRateLimitError(requestsPerMinute: number, retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError(
    "rate_limit_exceeded",
    `This API key allows ${requestsPerMinute} ${requestsPerMinute === 1 ? "request" : "requests"} per minute; ` +
      `retry in ${seconds} s`,
    { retryAfterSeconds: seconds },
  );
}

/**
 * Redis is unreachable: spend cannot be bounded across instances, so nothing that needs a limit
 * is admitted (docs/limits.md, "When Redis is down"; the same rule as the database's,
 * errors/dependency-errors.ts).
 */
export function createLimitStoreUnavailableError(cause: unknown): GatewayError {
  return new GatewayError(
    "rate_limit_exceeded",
    "Spend and rate limits cannot be checked right now (the limit store is unreachable), so the " +
      "request was not admitted; retry in a few seconds",
    { retryAfterSeconds: LIMIT_STORE_RETRY_AFTER_SECONDS, cause },
  );
}

/** The limit store came back without its memory and is recovering the reservations in flight. */
export function createLimitStoreRecoveringError(retryAfterMs: number): GatewayError {
  return new GatewayError(
    "rate_limit_exceeded",
    "Spend limits cannot be checked for a few seconds (the limit store restarted and the requests " +
      "in flight are being accounted for again), so the request was not admitted; retry shortly",
    { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) },
  );
}
