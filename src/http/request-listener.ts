/**
 * The Node request listener: POSTs to the generation endpoints go straight to their handler, and
 * every other request goes through Hono (@hono/node-server's listener).
 *
 * Why: the generation endpoints already read and answer on the Node request and response, so
 * Hono's part of such a request was only the route lookup, a Context, the middleware chain and
 * the lightweight web Request: CPU spent on every non-streamed request for nothing these routes
 * need (docs/decisions/0001-hono-for-http.md). The direct path does
 * what those steps did for these routes: a request id and arrival time (request-id.ts), the 500
 * answer of an unhandled error (shared with Hono's `onError`, error-response.ts), and the
 * draining of a body the handler did not read (drain-unread-body.ts). The same handlers stay
 * registered in Hono, so a path the table does not match literally (say, percent-encoded) is
 * still served, by the same code.
 *
 * Before either path, the request must find room (in-flight-requests.ts): an instance that is
 * full or draining answers `rate_limit_exceeded` with `Retry-After` at once, in the envelope of
 * the endpoint's format. Health probes are never counted or refused.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createCommonErrorEnvelope, createMessagesErrorEnvelope } from "../errors/envelopes.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { Logger } from "../logging/logger.js";
import { drainUnreadBody } from "./drain-unread-body.js";
import { createErrorResponseHeaders, createUnhandledErrorAnswer } from "./error-response.js";
import type { GenerationHandler } from "./handle-generation.js";
import type { InFlightRequests } from "./in-flight-requests.js";
import { createNodeHeaderReader } from "./node-header-reader.js";
import { createRequestId } from "./request-id.js";
import { sendJson } from "./send-json.js";

export interface RequestListenerOptions {
  /** Hono's `app.fetch`: everything the direct table does not take. */
  fetch: Parameters<typeof getRequestListener>[0];
  hostname?: string;
  /** Exact request paths (no query) answered directly when the method is POST. */
  directPosts: ReadonlyMap<string, GenerationHandler>;
  logger: Logger;
  /** The overload cap and the drain; absent: every request is taken (tests of the listener alone). */
  inFlight?: InFlightRequests;
}

/** Liveness and readiness answer whatever the load: a full or draining instance must still say so. */
const PROBE_PATHS = new Set(["/healthz", "/readyz"]);

export function createRequestListener(options: RequestListenerOptions): RequestListener {
  const viaHono = getRequestListener(options.fetch, { hostname: options.hostname });
  const { directPosts, logger, inFlight } = options;
  return (incoming, outgoing) => {
    const path = pathOf(incoming.url);
    if (inFlight !== undefined && !PROBE_PATHS.has(path)) {
      const refusal = inFlight.enter(outgoing);
      if (refusal !== undefined) return refuse(refusal, path, incoming, outgoing, inFlight.draining);
    }
    if (incoming.method === "POST") {
      const handler = directPosts.get(path);
      if (handler !== undefined) return serveDirect(handler, incoming, outgoing, logger);
    }
    return viaHono(incoming, outgoing);
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
): void {
  const requestId = createRequestId();
  const envelope = path.startsWith("/api/v1/messages")
    ? createMessagesErrorEnvelope(error, requestId)
    : createCommonErrorEnvelope(error, requestId);
  const headers = createErrorResponseHeaders(error, requestId);
  if (closeConnection) headers.Connection = "close";
  sendJson(outgoing, error.status, headers, JSON.stringify(envelope));
  if (!closeConnection) drainUnreadBody(incoming);
}

/** The request-target's path: what Hono matches routes against for an origin-form target. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function serveDirect(
  handler: GenerationHandler,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  logger: Logger,
): void {
  const requestId = createRequestId();
  const startedAt = performance.now();
  // An answer sent before the body was read (a bad key, a body over the cap) leaves the rest of
  // the body on the connection; it is read off or the connection dropped, as Hono's listener does.
  outgoing.once("close", () => {
    if (!incoming.readableEnded) drainUnreadBody(incoming);
  });
  handler({
    incoming,
    outgoing,
    headers: createNodeHeaderReader(incoming),
    requestId,
    startedAt,
    logger,
  }).catch((thrown: unknown) => answerUnhandled(thrown, outgoing, requestId, logger));
}

/** A handler that threw: the shared 500 answer, or a cut connection if its answer had begun. */
function answerUnhandled(thrown: unknown, outgoing: ServerResponse, requestId: string, logger: Logger): void {
  const answer = createUnhandledErrorAnswer(thrown, requestId, logger);
  if (outgoing.headersSent) outgoing.destroy();
  else sendJson(outgoing, answer.status, answer.headers, answer.body);
}
