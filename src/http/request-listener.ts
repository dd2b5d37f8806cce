/**
 * The Node request listener: POSTs to the generation endpoints go straight to their handler, and
 * every other request goes through Hono (@hono/node-server's listener).
 *
 * Why: the generation endpoints already read and answer on the Node request and response, so
 * Hono's part of such a request was only the route lookup, a Context, the middleware chain and
 * the lightweight web Request, about 12 µs per request (3-4 % of a non-streamed request's CPU,
 * docs/performance.md item 27). The direct path does what those steps did for these routes: a
 * request id and arrival time (request-id.ts), the 500 answer of an unhandled error (create-app.ts
 * `onError`), and the draining of a body the handler did not read (drain-unread-body.ts). The
 * same handlers stay registered in Hono, so a path the table does not match literally (say,
 * percent-encoded) is still served, by the same code.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createCommonErrorEnvelope } from "../errors/envelopes.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Logger } from "../logging/logger.js";
import { drainUnreadBody } from "./drain-unread-body.js";
import { createErrorResponseHeaders } from "./error-response.js";
import type { GenerationHandler } from "./handle-generation.js";
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
}

export function createRequestListener(options: RequestListenerOptions): RequestListener {
  const viaHono = getRequestListener(options.fetch, { hostname: options.hostname });
  const { directPosts, logger } = options;
  return (incoming, outgoing) => {
    if (incoming.method === "POST") {
      const handler = directPosts.get(pathOf(incoming.url));
      if (handler !== undefined) return serveDirect(handler, incoming, outgoing, logger);
    }
    return viaHono(incoming, outgoing);
  };
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

/** As Hono's `onError` in create-app.ts: log it, answer 500 in the common envelope. */
function answerUnhandled(thrown: unknown, outgoing: ServerResponse, requestId: string, logger: Logger): void {
  logger.error({ err: thrown, requestId }, "unhandled error");
  if (outgoing.headersSent) {
    outgoing.destroy();
    return;
  }
  const error = new GatewayError("internal_error", "Internal error");
  sendJson(
    outgoing,
    error.status,
    createErrorResponseHeaders(error, requestId),
    JSON.stringify(createCommonErrorEnvelope(error, requestId)),
  );
}
