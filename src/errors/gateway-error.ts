import { clampRetryAfter, ERROR_CATALOG, type ErrorCode } from "./catalog.js";

export interface GatewayErrorOptions {
  param?: string | null;
  retryAfterSeconds?: number;
  upstreamStatus?: number;
  cause?: unknown;
  details?: ErrorDetails;
}

/**
 * A machine-readable reason beside the code, for clients that branch on it: the Messages envelope
 * carries it as `error.details` (Anthropic's SDK reads `details.error_code`).
 */
export interface ErrorDetails {
  error_code: string;
  [field: string]: unknown;
}

/** The only error type that crosses module boundaries; its code is one of the error catalog's. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly upstreamStatus?: number;
  readonly details?: ErrorDetails;
  private readonly retryAfterHint?: number;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GatewayError";
    this.code = code;
    this.param = options.param ?? null;
    this.upstreamStatus = options.upstreamStatus;
    this.retryAfterHint = options.retryAfterSeconds;
    if (options.details !== undefined) this.details = options.details;
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }

  /** The upstream's own `Retry-After`, in seconds as it sent it (unclamped); undefined when it sent none. */
  get retryAfterHintSeconds(): number | undefined {
    return this.retryAfterHint;
  }

  /** Present exactly for the retryable codes, clamped to 1..120. */
  get retryAfterSeconds(): number | undefined {
    return ERROR_CATALOG[this.code].retryable ? clampRetryAfter(this.retryAfterHint) : undefined;
  }

  static invalidRequest(message: string, param?: string | null): GatewayError {
    return new GatewayError("invalid_request", message, { param: param ?? null });
  }
}

/** Anything thrown that is not a GatewayError is an internal error; its message is not leaked. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError("internal_error", "Internal error", { cause: error });
}

/**
 * The GatewayError an `error` stream part carries. Inside the gateway a part's error is the
 * GatewayError itself, from the adapter that classified it through the run to the writer that
 * renders it (docs/decisions/0311-one-error-form-in-the-run.md); only a part made outside the
 * gateway's code (plain `{ code, message }`) is rebuilt.
 */
export function readStreamError(info: {
  code: string;
  message: string;
  param?: string | null;
  retryAfterSeconds?: number;
  upstreamStatus?: number;
}): GatewayError {
  return info instanceof GatewayError ? info : createGatewayErrorFromInfo(info);
}

/** Rebuilds a GatewayError from plain error info (an `error` part made outside the gateway). */
export function createGatewayErrorFromInfo(info: {
  code: string;
  message: string;
  param?: string | null;
  retryAfterSeconds?: number;
  upstreamStatus?: number;
}): GatewayError {
  const code = isErrorCode(info.code) ? info.code : "provider_unavailable";
  return new GatewayError(code, info.message, {
    param: info.param,
    retryAfterSeconds: info.retryAfterSeconds,
    upstreamStatus: info.upstreamStatus,
  });
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, code);
}
