/** Renders a GatewayError as an HTTP response in the envelope of the endpoint's format. */
import { createCommonErrorEnvelope, createErrorHeaders } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import type { Logger } from "../../logging/logger.js";

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

/**
 * An error no handler caught: a bug is logged with the request id and answered 500 in the common
 * envelope; a GatewayError is answered with its own code in that envelope (the router's `onError`,
 * create-app.ts).
 */
export function createUnhandledErrorAnswer(
  thrown: unknown,
  requestId: string,
  logger: Logger,
): { status: number; code: string; headers: Record<string, string>; body: string } {
  // A classified error a route let through (a dependency outage where the route has no handling
  // of its own) keeps its code and retry information; only the rest is a bug.
  if (!(thrown instanceof GatewayError)) logger.error({ err: thrown, requestId }, "unhandled error");
  const error =
    thrown instanceof GatewayError ? thrown : new GatewayError("internal_error", "Internal error");
  return {
    status: error.status,
    code: error.code,
    headers: createErrorResponseHeaders(error, requestId),
    body: JSON.stringify(createCommonErrorEnvelope(error, requestId)),
  };
}

/**
 * The GatewayError a route answers for what its handler threw (anything not one is a bug). Every
 * `internal_error` is logged with the request id and what was thrown (its message is not
 * answered), so that no 500 goes unexplained.
 */
export function classifyCaught(thrown: unknown, requestId: string, logger: Logger): GatewayError {
  const error = toGatewayError(thrown);
  if (error.code === "internal_error") logger.error({ err: thrown, requestId }, "unhandled error");
  return error;
}
