/**
 * The one error catalog. Every error the gateway emits, in every format, comes from
 * here; `test/error-catalog.test.ts` keeps it, the docs and /openapi.json in agreement.
 */

export const ERROR_CATALOG = {
  provider_auth: { status: 502, retryable: false, openaiType: "api_error", anthropicType: "api_error" },
  provider_rate_limit: {
    status: 429,
    retryable: true,
    openaiType: "rate_limit_error",
    anthropicType: "rate_limit_error",
  },
  provider_overloaded: {
    status: 529,
    retryable: true,
    openaiType: "api_error",
    anthropicType: "overloaded_error",
  },
  context_length_exceeded: {
    status: 400,
    retryable: false,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
  },
  content_filter: {
    status: 400,
    retryable: false,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
  },
  provider_timeout: { status: 504, retryable: true, openaiType: "api_error", anthropicType: "timeout_error" },
  provider_unavailable: { status: 502, retryable: true, openaiType: "api_error", anthropicType: "api_error" },
  insufficient_credits: {
    status: 402,
    retryable: false,
    openaiType: "insufficient_quota",
    anthropicType: "billing_error",
  },
  key_limit_exceeded: {
    status: 402,
    retryable: false,
    openaiType: "insufficient_quota",
    anthropicType: "billing_error",
  },
  model_not_allowed: {
    status: 403,
    retryable: false,
    openaiType: "permission_error",
    anthropicType: "permission_error",
  },
  invalid_api_key: {
    status: 401,
    retryable: false,
    openaiType: "authentication_error",
    anthropicType: "authentication_error",
  },
  workspace_locked: {
    status: 403,
    retryable: false,
    openaiType: "permission_error",
    anthropicType: "permission_error",
  },
  rate_limit_exceeded: {
    status: 429,
    retryable: true,
    openaiType: "rate_limit_error",
    anthropicType: "rate_limit_error",
  },
  invalid_request: {
    status: 400,
    retryable: false,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
  },
  payload_too_large: {
    status: 413,
    retryable: false,
    openaiType: "invalid_request_error",
    anthropicType: "request_too_large",
  },
  internal_error: { status: 500, retryable: false, openaiType: "api_error", anthropicType: "api_error" },
} as const satisfies Record<string, ErrorCatalogEntry>;

export interface ErrorCatalogEntry {
  /** The code's HTTP status. */
  status: number;
  /** true exactly for the five codes that carry `Retry-After` and `retry_after_seconds`. */
  retryable: boolean;
  /** `error.type` in the common (OpenAI-compatible) envelope. */
  openaiType: string;
  /** `error.type` in the messages-format envelope (Anthropic's error classes). */
  anthropicType: string;
}

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Seconds until retry, clamped to 1..120. */
export function clampRetryAfter(seconds: number | undefined): number {
  if (seconds === undefined || !Number.isFinite(seconds)) return DEFAULT_RETRY_AFTER_SECONDS;
  return Math.min(120, Math.max(1, Math.ceil(seconds)));
}
