/**
 * CORS for the public API: browsers on other origins may call the routes the table marks
 * `publicApi` (the bearer-key API), never the others (admin, internal-token, pages). Applied by
 * the router (create-app.ts) before a handler runs, as headers set on the Node response, so every
 * answer of such a route carries them however it is written: a web Response, an SSE stream, an
 * error in any format, the 500 of an unhandled error, the in-flight cap's 429.
 *
 * - An allowed origin gets `Access-Control-Allow-Origin` (`*`, or its own origin echoed with
 *   `Vary: Origin` when origins are listed) and `Access-Control-Expose-Headers` naming the
 *   headers clients read. No credentials mode: cookies mean nothing here, the key is a header.
 * - `OPTIONS` on a public-API path is the preflight: 204 with the path's methods, the requested
 *   headers reflected and a `Max-Age`. On any other path OPTIONS stays the router's 405 or 404.
 *
 * The headers are built once; an answer costs two or three `setHeader` calls.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteDefinition } from "./route-definition.js";
import { createRouteMatcher } from "./route-matcher.js";

/**
 * Response headers a browser script may read: the request id, when and whether to retry, what a
 * translation dropped, and the headroom of the key's limits (http/generation/headroom-headers.ts).
 */
export const EXPOSED_HEADERS =
  "X-Request-Id, Retry-After, X-Should-Retry, X-Hi-Dropped, X-Hi-Limit-Remaining-Daily-Micro-Usd, " +
  "X-Hi-Limit-Remaining-Monthly-Micro-Usd, X-Hi-Limit-Remaining-Total-Micro-Usd, X-Hi-Balance-Remaining-Micro-Usd";
/** How long a browser may reuse a preflight's answer (Chromium caps it at two hours). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;
/** A comma-separated list of header names, as `Access-Control-Request-Headers` carries it. */
const HEADER_NAME_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;
const MAX_REQUESTED_HEADERS_LENGTH = 2048;

export interface PublicApiCors {
  /**
   * Before the route runs: sets the CORS headers of a public-API answer on `outgoing`, or answers
   * a preflight itself (true: the request is answered). `route` is the route matched, if any.
   */
  handle(
    method: string,
    path: string,
    route: RouteDefinition | undefined,
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    requestId: string,
  ): boolean;
  /** The headers of an answer on `path` written before routing (the in-flight cap's refusal). */
  markAnswer(path: string, incoming: IncomingMessage, outgoing: ServerResponse): void;
}

/** undefined when no origin is allowed (CORS off): the router then does nothing extra. */
export function createPublicApiCors(
  routes: readonly RouteDefinition[],
  allowedOrigins: readonly string[],
): PublicApiCors | undefined {
  if (allowedOrigins.length === 0) return undefined;
  const publicRoutes = createRouteMatcher(routes.filter((route) => route.publicApi === true));
  const anyOrigin = allowedOrigins.includes("*");
  const listed = new Set(allowedOrigins);

  /** The origin to allow in the answer, or undefined (no CORS headers: the browser refuses). */
  const allowOrigin = (incoming: IncomingMessage): string | undefined => {
    if (anyOrigin) return "*";
    const origin = incoming.headers.origin;
    return origin !== undefined && listed.has(origin) ? origin : undefined;
  };

  const mark = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    // With listed origins the answer differs by Origin: caches must keep one per origin.
    if (!anyOrigin) outgoing.setHeader("Vary", "Origin");
    const origin = allowOrigin(incoming);
    if (origin === undefined) return;
    outgoing.setHeader("Access-Control-Allow-Origin", origin);
    outgoing.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
  };

  const answerPreflight = (
    methods: readonly string[],
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    requestId: string,
  ): void => {
    const headers: Record<string, string> = {
      Allow: [...methods, "OPTIONS"].join(", "),
      "X-Request-Id": requestId,
      Vary: anyOrigin ? "Access-Control-Request-Headers" : "Origin, Access-Control-Request-Headers",
    };
    const origin = allowOrigin(incoming);
    if (origin !== undefined) {
      headers["Access-Control-Allow-Origin"] = origin;
      headers["Access-Control-Allow-Methods"] = methods.join(", ");
      headers["Access-Control-Max-Age"] = String(PREFLIGHT_MAX_AGE_SECONDS);
      const requested = incoming.headers["access-control-request-headers"];
      if (
        requested !== undefined &&
        requested.length <= MAX_REQUESTED_HEADERS_LENGTH &&
        HEADER_NAME_LIST.test(requested)
      ) {
        headers["Access-Control-Allow-Headers"] = requested;
      }
    }
    outgoing.writeHead(204, headers);
    outgoing.end();
  };

  return {
    handle(method, path, route, incoming, outgoing, requestId) {
      if (route !== undefined) {
        if (route.publicApi === true) mark(incoming, outgoing);
        return false;
      }
      // No route of this method: a preflight, or a 405 of a public-API path (which browsers
      // may read like any other error). A path no public route serves is left as it is.
      const methods = publicRoutes.allowedMethods(path);
      if (methods.length === 0) return false;
      if (method === "OPTIONS") {
        answerPreflight(methods, incoming, outgoing, requestId);
        return true;
      }
      mark(incoming, outgoing);
      return false;
    },
    markAnswer(path, incoming, outgoing) {
      if (publicRoutes.allowedMethods(path).length > 0) mark(incoming, outgoing);
    },
  };
}
