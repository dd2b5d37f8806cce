/**
 * A route whose handler works on the Node request and response itself (the generation endpoints,
 * the hottest path: body, client-gone signal and answer, never a web Request or Response). The
 * route hands them over and tells the router (create-app.ts) with ANSWERED that the answer is
 * written; an error it throws is the router's (a 500, or a cut connection once the answer began).
 */
import type { GenerationHandler } from "./handle-generation.js";
import { ANSWERED, type RouteAnswer, type RouteHandler } from "./route-definition.js";

export function createNodeRouteHandler(handler: GenerationHandler): RouteHandler {
  return (c) =>
    handler({
      incoming: c.env.incoming,
      outgoing: c.env.outgoing,
      // Reads go straight to the Node request's headers; no web Headers object is built.
      headers: c.req.headers,
      requestId: c.get("requestId"),
      startedAt: c.get("startedAt"),
      logger: c.get("logger"),
      requestLog: c.get("requestLog"),
    }).then(answered);
}

const answered = (): RouteAnswer => ANSWERED;
