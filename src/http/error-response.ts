/** Renders a GatewayError as an HTTP response in the envelope of the endpoint's format. */
import { createErrorHeaders } from "../errors/envelopes.js";
import type { GatewayError } from "../errors/gateway-error.js";

export function createErrorResponse(error: GatewayError, body: unknown, requestId: string): Response {
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: createErrorResponseHeaders(error, requestId),
  });
}

/** The headers of an error answer (also written straight to the Node response by the generation endpoints). */
export function createErrorResponseHeaders(error: GatewayError, requestId: string): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "X-Request-Id": requestId,
    ...createErrorHeaders(error),
    // Official SDKs retry 5xx/429 on their own; tell them not to when retrying cannot help.
    ...(error.retryAfterSeconds === undefined && error.status >= 500 ? { "x-should-retry": "false" } : {}),
  };
}
