/**
 * Turns an upstream failure (HTTP error response, or an in-stream `{"error":…}` frame) into a
 * GatewayError of the error catalog. Understands the OpenAI, Anthropic and Gemini error
 * envelopes so every adapter can share it.
 *
 * Provider-side failures (auth, rate limit, overload, outage, timeout) get fixed gateway messages:
 * upstream texts for those name organisations, key fragments and quotas that are the gateway's
 * business, not the caller's. Caller-fixable failures (bad request, context too long, content
 * policy) carry the upstream message, with anything that looks like a credential masked.
 */
import type { UpstreamErrorInfo } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { isRecord } from "./read-wire-values.js";

/** Header values as undici or node:http give them. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamErrorResponse {
  status: number;
  headers?: UpstreamHeaders;
  /** The response body as text (may be empty, JSON of any envelope, or HTML from a proxy). */
  bodyText?: string;
}

/** The fields of an error body that classification looks at, whatever the envelope. */
export interface UpstreamErrorDetails {
  message?: string;
  /** OpenAI `error.type`, Anthropic `error.type`. */
  type?: string;
  /** OpenAI `error.code` (string form). */
  code?: string;
  /** Gemini `error.status` (RPC code such as `RESOURCE_EXHAUSTED`). */
  rpcStatus?: string;
  /** Gemini `error.code` (an HTTP status number). */
  httpCode?: number;
  param?: string;
  /** Gemini `RetryInfo.retryDelay`, in seconds. */
  retryDelaySeconds?: number;
}

const MAX_MESSAGE_LENGTH = 1000;

/** Upstream 4xx messages that describe the gateway's own account, not the caller's request. */
const ACCOUNT_PROBLEM_PATTERNS = [
  /credit balance is too low/i,
  /API_KEY_INVALID/,
  /API key (not valid|expired|invalid)/i,
];

const CONTEXT_LENGTH_PATTERNS: RegExp[] = [
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /context[_ ]window[_ ]exceeded/i,
  /prompt is too long/i,
  /input is longer than the model'?s context length/i,
  /too large for model/i,
  /input tokens exceed the configured limit/i,
  /exceeds? (the )?(model'?s )?(maximum )?context (window|length|size)/i,
  /reduce the length of the messages/i,
  /too many (input )?tokens/i,
  /exceeds the maximum number of tokens/i,
];

const CONTENT_FILTER_PATTERNS: RegExp[] = [
  /content[_ ]filter/i,
  /content[_ ]policy[_ ]violation/i,
  /content management policy/i,
  /flagged by (our|the) (safety|moderation)/i,
  /responsibleaipolicyviolation/i,
];

/** Anthropic `error.type` and OpenAI `error.type` values that imply an HTTP status. */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  billing_error: 402,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  insufficient_quota: 429,
  api_error: 500,
  server_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Gemini / google.rpc status names and the HTTP status they travel with. */
const STATUS_BY_RPC_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/** Classifies an upstream HTTP error response. */
export function classifyUpstreamError(response: UpstreamErrorResponse): GatewayError {
  const details = parseUpstreamErrorBody(response.bodyText ?? "");
  const retryAfterSeconds = readRetryAfterSeconds(response.headers ?? {}) ?? details.retryDelaySeconds;
  return classifyErrorDetails(response.status, details, retryAfterSeconds);
}

/**
 * Classifies an error that arrived inside a 200 stream (or a 200 JSON body): OpenAI
 * `{"error":{…}}`, Anthropic `{"type":"error","error":{…}}`, Gemini `{"error":{"code":503,…}}`.
 * Without a status, one is inferred from the error's type or code; unknown ones count as 500,
 * since an error after a successful start is almost always the provider's.
 */
export function classifyStreamErrorFrame(frame: unknown): GatewayError {
  const details = extractErrorDetails(frame);
  const status = inferStatus(details) ?? 500;
  return classifyErrorDetails(status, details, details.retryDelaySeconds);
}

/** The stream-part form of a GatewayError (`error` part of a canonical stream). */
export function toUpstreamErrorInfo(error: GatewayError): UpstreamErrorInfo {
  return {
    code: error.code,
    message: error.message,
    param: error.param,
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    ...(error.upstreamStatus === undefined ? {} : { upstreamStatus: error.upstreamStatus }),
  };
}

/** Parses any of the three error envelopes; non-JSON bodies yield at most a message. */
export function parseUpstreamErrorBody(bodyText: string): UpstreamErrorDetails {
  const trimmed = bodyText.trim();
  if (trimmed === "") return {};
  try {
    return extractErrorDetails(JSON.parse(trimmed));
  } catch {
    // A proxy's HTML or plain-text page: keep a short plain message only when it looks like text.
    return trimmed.startsWith("<") ? {} : { message: trimmed };
  }
}

/**
 * `retry-after-ms` (OpenAI, Anthropic) wins over `retry-after` (seconds or an HTTP date);
 * the result is seconds, unclamped (GatewayError clamps).
 */
export function readRetryAfterSeconds(headers: UpstreamHeaders): number | undefined {
  const milliseconds = Number(readHeader(headers, "retry-after-ms"));
  if (readHeader(headers, "retry-after-ms") !== undefined && Number.isFinite(milliseconds)) {
    return Math.max(0, milliseconds / 1000);
  }
  const value = readHeader(headers, "retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - Date.now()) / 1000);
}

function classifyErrorDetails(
  status: number,
  details: UpstreamErrorDetails,
  retryAfterSeconds: number | undefined,
): GatewayError {
  const options = { upstreamStatus: status, retryAfterSeconds };
  const text = [details.message, details.type, details.code, details.rpcStatus].filter(Boolean).join(" ");

  if (status === 401 || status === 403) {
    return new GatewayError(
      "provider_auth",
      "The upstream provider rejected the gateway's credentials",
      options,
    );
  }
  // The gateway's own upstream account is out of funds or its key is invalid: not something the
  // caller can fix, and the upstream's wording would expose our account state. Anthropic says
  // "credit balance is too low" with a 400; Gemini reports a bad key as 400 API_KEY_INVALID.
  if (
    status === 402 ||
    details.code === "insufficient_quota" ||
    details.type === "insufficient_quota" ||
    (status >= 400 && status < 500 && ACCOUNT_PROBLEM_PATTERNS.some((pattern) => pattern.test(text)))
  ) {
    return new GatewayError(
      "provider_auth",
      "The upstream provider refused the gateway's account (billing)",
      options,
    );
  }
  if (status === 429) {
    return new GatewayError(
      "provider_rate_limit",
      "The upstream provider is rate limiting requests",
      options,
    );
  }
  if (status === 529 || details.type === "overloaded_error" || (status >= 500 && /overloaded/i.test(text))) {
    return new GatewayError("provider_overloaded", "The upstream provider is overloaded", options);
  }
  if (status === 408 || status === 504 || details.rpcStatus === "DEADLINE_EXCEEDED") {
    return new GatewayError("provider_timeout", "The upstream provider timed out", options);
  }
  if (status >= 500) {
    return new GatewayError("provider_unavailable", `The upstream provider failed (HTTP ${status})`, options);
  }
  if (status >= 400) {
    const message =
      sanitizeUpstreamMessage(details.message) ??
      `The upstream provider rejected the request (HTTP ${status})`;
    if (CONTEXT_LENGTH_PATTERNS.some((pattern) => pattern.test(text))) {
      return new GatewayError("context_length_exceeded", message, {
        param: details.param ?? null,
        ...options,
      });
    }
    if (CONTENT_FILTER_PATTERNS.some((pattern) => pattern.test(text))) {
      return new GatewayError("content_filter", message, options);
    }
    return new GatewayError("invalid_request", message, { param: details.param ?? null, ...options });
  }
  // 1xx/3xx: we never follow redirects, so a redirect means a misconfigured base URL.
  return new GatewayError("provider_unavailable", `Unexpected upstream response (HTTP ${status})`, options);
}

function extractErrorDetails(value: unknown): UpstreamErrorDetails {
  if (!isRecord(value)) return typeof value === "string" ? { message: value } : {};
  const inner = value.error;
  // `{"error": "text"}` is what several compatible servers send.
  if (typeof inner === "string") return { message: inner };
  const source = isRecord(inner) ? inner : value;
  const details: UpstreamErrorDetails = {};
  if (typeof source.message === "string") details.message = source.message;
  if (typeof source.type === "string" && source.type !== "error") details.type = source.type;
  if (typeof source.code === "string") details.code = source.code;
  if (typeof source.code === "number") details.httpCode = source.code;
  if (typeof source.status === "string") details.rpcStatus = source.status;
  if (typeof source.param === "string") details.param = source.param;
  const retryDelay = findRetryDelaySeconds(source.details);
  if (retryDelay !== undefined) details.retryDelaySeconds = retryDelay;
  return details;
}

function inferStatus(details: UpstreamErrorDetails): number | undefined {
  if (details.httpCode !== undefined && details.httpCode >= 100 && details.httpCode < 600)
    return details.httpCode;
  // Own keys only: "constructor" or "toString" from an upstream must not find Object's members.
  if (details.rpcStatus !== undefined && Object.hasOwn(STATUS_BY_RPC_CODE, details.rpcStatus)) {
    return STATUS_BY_RPC_CODE[details.rpcStatus];
  }
  if (details.code === "rate_limit_exceeded" || details.code === "insufficient_quota") return 429;
  if (details.code === "context_length_exceeded") return 400;
  if (details.type !== undefined && Object.hasOwn(STATUS_BY_ERROR_TYPE, details.type)) {
    return STATUS_BY_ERROR_TYPE[details.type];
  }
  return undefined;
}

/** Gemini puts the retry hint in `details[].retryDelay` ("34.4s") of a `google.rpc.RetryInfo`. */
function findRetryDelaySeconds(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const entry of details) {
    if (isRecord(entry) && typeof entry.retryDelay === "string") {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(entry.retryDelay.trim());
      if (match) return Number(match[1]);
    }
  }
  return undefined;
}

/** Masks credential-looking tokens (OpenAI echoes key fragments) and bounds the length. */
function sanitizeUpstreamMessage(message: string | undefined): string | undefined {
  if (message === undefined || message.trim() === "") return undefined;
  const masked = message
    .replace(/\b(sk|pk|rk|sess|key)-[A-Za-z0-9_*-]{6,}/g, "[redacted]")
    .replace(/\bAIza[0-9A-Za-z_-]{20,}/g, "[redacted]")
    .replace(/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [redacted]");
  return masked.length > MAX_MESSAGE_LENGTH ? `${masked.slice(0, MAX_MESSAGE_LENGTH)}…` : masked;
}

function readHeader(headers: UpstreamHeaders, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
