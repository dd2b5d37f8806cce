/**
 * The two error envelopes. The common one serves chat completions, responses,
 * generation and playground keys; the messages one serves the messages format.
 */
import { ERROR_CATALOG } from "./catalog.js";
import type { ErrorDetails, GatewayError } from "./gateway-error.js";

export interface CommonErrorEnvelope {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    request_id?: string;
    retry_after_seconds?: number;
  };
}

export interface MessagesErrorEnvelope {
  type: "error";
  error: {
    type: string;
    code: string;
    message: string;
    retry_after_seconds?: number;
    details?: ErrorDetails;
  };
  request_id?: string;
}

export function createCommonErrorEnvelope(error: GatewayError, requestId?: string): CommonErrorEnvelope {
  const retryAfter = error.retryAfterSeconds;
  return {
    error: {
      message: error.message,
      type: ERROR_CATALOG[error.code].openaiType,
      code: error.code,
      param: error.param,
      ...(requestId === undefined ? {} : { request_id: requestId }),
      ...(retryAfter === undefined ? {} : { retry_after_seconds: retryAfter }),
    },
  };
}

export function createMessagesErrorEnvelope(error: GatewayError, requestId?: string): MessagesErrorEnvelope {
  const retryAfter = error.retryAfterSeconds;
  return {
    type: "error",
    error: {
      type: ERROR_CATALOG[error.code].anthropicType,
      code: error.code,
      message: error.message,
      ...(retryAfter === undefined ? {} : { retry_after_seconds: retryAfter }),
      ...(error.details === undefined ? {} : { details: error.details }),
    },
    ...(requestId === undefined ? {} : { request_id: requestId }),
  };
}

/** Headers that go with an error response: `Retry-After` iff the code is retryable. */
export function createErrorHeaders(error: GatewayError): Record<string, string> {
  const retryAfter = error.retryAfterSeconds;
  return retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) };
}
