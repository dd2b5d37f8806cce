/**
 * A route whose handler works on the Node request and response itself (the generation endpoints,
 * the hottest path: body, client-gone signal and answer, never a web Request or Response). The
 * route hands them over and tells @hono/node-server with RESPONSE_ALREADY_SENT that the answer is
 * written.
 */
// Must stay a static import: the constant has to be built before getRequestListener swaps the
// global Response for the adapter's own class, or the adapter would try to write it as an answer.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { GenerationHandler } from "./handle-generation.js";
import { createNodeHeaderReader } from "./node-header-reader.js";
import type { RouteHandler } from "./route-definition.js";

/**
 * A generation handler as a route: it answers on the Node response itself. A handler that threw
 * before its answer began is answered by the router's unhandled-error 500; one that threw after
 * has its connection cut, the only signal left to the client.
 */
export function createNodeRouteHandler(handler: GenerationHandler): RouteHandler {
  return async (c) => {
    const { incoming, outgoing } = c.env;
    try {
      await handler({
        incoming,
        outgoing,
        // Reads go straight to the Node request's headers; no web Headers object is built.
        headers: createNodeHeaderReader(incoming),
        requestId: c.get("requestId"),
        startedAt: c.get("startedAt"),
        logger: c.get("logger"),
      });
    } catch (thrown) {
      if (!outgoing.headersSent) throw thrown;
      c.get("logger").error({ err: thrown, requestId: c.get("requestId") }, "unhandled error");
      outgoing.destroy();
    }
    return RESPONSE_ALREADY_SENT;
  };
}
