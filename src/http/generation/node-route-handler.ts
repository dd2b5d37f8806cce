/**
 * A route whose handler works on the Node request and response itself (the generation endpoints,
 * the hottest path: body, client-gone signal and answer, never a web Request or Response). The
 * route hands them over and tells the router (create-app.ts) with ANSWERED that the answer is
 * written; an error it throws is the router's (a 500, or a cut connection once the answer began).
 */

import { ANSWERED, type RouteAnswer, type RouteHandler } from "../router/route-definition.js";
import type { GenerationHandler } from "./handle-generation.js";

export function createNodeRouteHandler(handler: GenerationHandler): RouteHandler {
  return (c) =>
    handler({
      incoming: c.incoming,
      outgoing: c.outgoing,
      // Reads go straight to the Node request's headers; no web Headers object is built.
      headers: c.req.headers,
      requestId: c.requestId,
      startedAt: c.startedAt,
      logger: c.logger,
      requestLog: c.requestLog,
    }).then(answered);
}

const answered = (): RouteAnswer => ANSWERED;
