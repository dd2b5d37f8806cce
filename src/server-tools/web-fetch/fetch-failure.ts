/**
 * Why an outbound fetch did not produce a page. A page problem is a value, never an exception: the
 * tool loop turns it into a tool result for the model, and `message` is written for that reader
 * (short, deterministic, no resolved address, no timing).
 */

export type FetchFailureReason =
  /** Not an absolute URL, too long, or carries credentials. */
  | "bad_url"
  /** A scheme other than https (and http when allowed). */
  | "bad_scheme"
  /** A port outside the allowed list. */
  | "blocked_port"
  /** The host is, or resolves to, an address that is not on the public internet. */
  | "blocked_address"
  /** The host name does not resolve. */
  | "dns_failure"
  /** No connection could be made, or it broke before the answer was complete. */
  | "unreachable"
  /** More redirects than allowed. */
  | "too_many_redirects"
  /** The body exceeds the byte cap. */
  | "too_large"
  /** The deadline passed. */
  | "timeout"
  /** The server answered with a status other than 2xx (or a redirect without a target). */
  | "http_status"
  /** A content type this caller does not read. */
  | "unsupported_type"
  /** The body could not be decoded (unknown or broken content encoding, unconvertible page). */
  | "bad_response";

export interface FetchFailure {
  ok: false;
  reason: FetchFailureReason;
  /** For the model: what was refused or failed, in one sentence. */
  message: string;
  /** The URL being fetched when it failed (after redirects), when it parsed. */
  url?: string;
  /** The HTTP status, for `http_status`. */
  status?: number;
  /** The response's media type, for `unsupported_type`. */
  contentType?: string;
  /**
   * For operators' logs only, never for the model: which rule refused the destination
   * (e.g. `private`, `linkLocal`, `loopback`, `name:localhost`).
   */
  detail?: string;
}

export function fetchFailure(
  reason: FetchFailureReason,
  message: string,
  extra: Omit<FetchFailure, "ok" | "reason" | "message"> = {},
): FetchFailure {
  return { ok: false, reason, message, ...extra };
}

/** The message of a fetch that ran out of time. */
export function timeoutMessage(timeoutMs: number): string {
  const seconds = timeoutMs / 1000;
  return `Failed: the page did not load within ${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s.`;
}
