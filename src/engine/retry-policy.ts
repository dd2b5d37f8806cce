/**
 * What a failed attempt means for the rest of the run, and how long to wait before trying a route
 * again. Only failures of the upstream (its transport, its deadlines, its 429 / 5xx / 529 answers,
 * every `provider_*` code) may be fixed by another route or a later try; a request the upstream
 * found wrong (`invalid_request`, `context_length_exceeded`, `content_filter`) fails the same way
 * everywhere, and a gateway fault (`internal_error`) is not the route's doing.
 */
import type { ErrorCode } from "../errors/catalog.js";
import type { GatewayError } from "../errors/gateway-error.js";

export interface RetryPolicy {
  /** Extra passes over the candidates after each one failed with a fixable error (0: none). */
  retries: number;
  /** First backoff; each further pass doubles it, with full jitter. */
  baseDelayMs: number;
  /** Longest upstream `Retry-After` honoured; a route asking for more is not tried again. */
  maxRetryAfterMs: number;
  /** No new attempt (and no backoff) past this long after the request arrived. */
  failoverDeadlineMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 1,
  baseDelayMs: 200,
  maxRetryAfterMs: 5_000,
  failoverDeadlineMs: 60_000,
};

const FIXABLE_ELSEWHERE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "provider_unavailable",
  "provider_timeout",
  "provider_overloaded",
  "provider_rate_limit",
  "provider_auth",
]);

/** Another route (or the same one later) could answer where this attempt failed. */
export function isFixableElsewhere(error: GatewayError): boolean {
  return FIXABLE_ELSEWHERE.has(error.code);
}

/**
 * Whether trying the same route again can help: not when its credentials were refused (they will
 * be again), and not when it asked to be left alone for longer than the cap.
 */
export function mayRetrySameRoute(error: GatewayError, policy: RetryPolicy): boolean {
  if (error.code === "provider_auth") return false;
  const asked = error.retryAfterHintSeconds;
  return asked === undefined || asked * 1000 <= policy.maxRetryAfterMs;
}

/**
 * How long to wait before pass `pass` (1 for the first retry): full jitter over an exponential
 * step, but never less than what the upstream asked for with `Retry-After` (already capped by
 * `mayRetrySameRoute`).
 */
export function computeBackoffMs(
  pass: number,
  policy: RetryPolicy,
  askedSeconds: number | undefined,
  random: () => number = Math.random,
): number {
  const step = policy.baseDelayMs * 2 ** Math.max(0, pass - 1);
  const jittered = Math.floor(random() * step);
  const asked = askedSeconds === undefined ? 0 : Math.ceil(askedSeconds * 1000);
  return Math.min(Math.max(jittered, asked), Math.max(policy.maxRetryAfterMs, policy.baseDelayMs));
}
