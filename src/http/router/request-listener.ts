/**
 * The Node request listener: every request that finds room goes to the router (create-app.ts).
 *
 * Before that, the request must find room (in-flight-requests.ts): an instance that is full or
 * draining answers `rate_limit_exceeded` with `Retry-After` at once, in the envelope of the
 * endpoint's format (with the CORS headers of a public-API path). Health probes are never
 * counted or refused. A refusal has its request log line like any other request (request-log.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { createCommonErrorEnvelope, createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { Router } from "./create-app.js";
import { drainUnreadBody } from "./drain-unread-body.js";
import { createErrorResponseHeaders } from "./error-response.js";
import type { InFlightRequests } from "./in-flight-requests.js";
import { createRequestId } from "./request-id.js";
import { RequestLogEntry, type RequestReporter } from "./request-log.js";
import { sendJson } from "./send-json.js";

export interface RequestListenerOptions {
  router: Router;
  /** The overload cap and the drain; absent: every request is taken (tests of the listener alone). */
  inFlight?: InFlightRequests;
}

/** Liveness and readiness answer whatever the load: a full or draining instance must still say so. */
const PROBE_PATHS = new Set(["/healthz", "/readyz"]);

export function createRequestListener(options: RequestListenerOptions): RequestListener {
  const { router, inFlight } = options;
  if (inFlight === undefined) return router.handle;
  return (incoming, outgoing) => {
    const path = pathOf(incoming.url);
    if (!PROBE_PATHS.has(path)) {
      const refusal = inFlight.enter(outgoing);
      if (refusal !== undefined) {
        // A browser can read the refusal (and its Retry-After) only with the CORS headers.
        router.markCorsAnswer(path, incoming, outgoing);
        return refuse(refusal, path, incoming, outgoing, inFlight.draining, router.report);
      }
    }
    return router.handle(incoming, outgoing);
  };
}

/**
 * A request the instance has no room for: answered at once in the endpoint's envelope (the
 * messages format's for its paths, the common one elsewhere), its body read off or, while
 * draining, its connection closed so the caller's retry goes elsewhere.
 */
function refuse(
  error: GatewayError,
  path: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  closeConnection: boolean,
  report: RequestReporter,
): void {
  const startedAt = performance.now();
  const requestId = createRequestId();
  const envelope = path.startsWith("/api/v1/messages")
    ? createMessagesErrorEnvelope(error, requestId)
    : createCommonErrorEnvelope(error, requestId);
  const headers = createErrorResponseHeaders(error, requestId);
  if (closeConnection) headers.Connection = "close";
  sendJson(outgoing, error.status, headers, JSON.stringify(envelope));
  if (!closeConnection) drainUnreadBody(incoming);
  // Refused before routing: the path as sent stands for the route.
  const entry = new RequestLogEntry(requestId, incoming.method ?? "GET", undefined, path, startedAt);
  entry.noteError(error.code, error.param, error.message);
  entry.end(outgoing, report);
}

/** The request-target's path, without its query. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
