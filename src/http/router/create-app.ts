/**
 * The HTTP application: the router of the route table (create-routes.ts) over node:http, with the
 * answers for what the table does not serve. Every request that finds room (request-listener.ts)
 * comes here.
 *
 * For every request: an id (ours, never the caller's: generation ids are derived from it) echoed
 * in `X-Request-Id`, the route of its method and path (HEAD is served by GET), 405 with `Allow`
 * for a path served under other methods and 404 for one served under none, the logged 500 of an
 * error no handler caught (or a cut connection if the answer had begun), and the body a handler
 * left unread read off (drain-unread-body.ts) so the keep-alive connection can carry the next
 * request. A handler answers with a web Response, which is written here, or writes to the Node
 * response itself and returns ANSWERED (the generation endpoints, node-route-handler.ts). When the
 * response closes, the request is reported (request-log.ts): its one log line, its metrics and,
 * when tracing is on, its spans.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { createInfoLineWriter, type Logger } from "../../logging/logger.js";
import type { GatewayMetrics, RequestTracer } from "../../observability/index.js";
import { createRoutes, type RouteDependencies } from "../create-routes.js";
import { createPublicApiCors } from "./cors.js";
import { drainUnreadBody } from "./drain-unread-body.js";
import { createUnhandledErrorAnswer } from "./error-response.js";
import { createRequestId } from "./request-id.js";
import { formatRequestLine, RequestLogEntry, type RequestReporter } from "./request-log.js";
import { RouteContext, RouteRequest } from "./route-context.js";
import { ANSWERED, type RouteAnswer, type RouteDefinition } from "./route-definition.js";
import { createRouteMatcher } from "./route-matcher.js";
import { sendJson } from "./send-json.js";
import { writeBody } from "./write-body.js";

export interface AppDependencies extends RouteDependencies {
  logger: Logger;
  /** Request tracing, when it is on. */
  tracer?: RequestTracer;
}

/** Who hears of every ended request besides the log. */
export interface RequestObservers {
  metrics?: Pick<GatewayMetrics, "record">;
  tracer?: RequestTracer;
}

/**
 * Routes without spans: probes and scrapes arrive every few seconds whatever the traffic, and their
 * spans would bury the requests' own.
 */
const UNTRACED_ROUTES: ReadonlySet<string | undefined> = new Set(["/healthz", "/readyz", "/metrics"]);

export interface Router {
  /** Serves one request (a Node request listener). */
  handle(incoming: IncomingMessage, outgoing: ServerResponse): void;
  /** The methods a path is served with (405 answers; tests). */
  allowedMethods(path: string): string[];
  /** The CORS headers of a public-API path, on an answer written before routing (cors.ts). */
  markCorsAnswer(path: string, incoming: IncomingMessage, outgoing: ServerResponse): void;
  /** Reports an ended request: its log line, metrics and spans (a refusal before routing uses it too). */
  report: RequestReporter;
  readonly routes: readonly RouteDefinition[];
}

export function createApp(deps: AppDependencies): Router {
  return createRouter(createRoutes(deps), deps.logger, deps.config.cors.allowedOrigins, {
    metrics: deps.metrics,
    tracer: deps.tracer,
  });
}

/** `corsOrigins`: who may call the public-API routes from a browser (none: CORS off). */
export function createRouter(
  routes: readonly RouteDefinition[],
  logger: Logger,
  corsOrigins: readonly string[] = [],
  observers: RequestObservers = {},
): Router {
  const matcher = createRouteMatcher(routes);
  const cors = createPublicApiCors(routes, corsOrigins);
  const { metrics, tracer } = observers;
  // The request line holds identifiers, counts and codes only (request-log.ts).
  const writeLine = createInfoLineWriter(logger, formatRequestLine);
  const report: RequestReporter = (entry) => {
    writeLine(entry);
    try {
      metrics?.record(entry);
      tracer?.record(entry);
    } catch (error) {
      logger.error({ err: error, requestId: entry.requestId }, "request metrics or spans failed");
    }
  };

  /** No route of this method: 405 with Allow if the path is served under others, else 404. */
  const answerNoRoute = (c: RouteContext): Response => {
    const { method, path } = c.req;
    const allowed = matcher.allowedMethods(path);
    if (allowed.length > 0 && !allowed.includes(method)) {
      const error = GatewayError.invalidRequest(
        `${method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`,
        null,
      );
      c.header("Allow", allowed.join(", "));
      return c.json(createCommonErrorEnvelope(error, c.requestId), 405);
    }
    return answerNotFound(c);
  };
  const answerNotFound = (c: RouteContext): Response => {
    const error = GatewayError.invalidRequest(`No route for ${c.req.method} ${c.req.path}`, null);
    return c.json(createCommonErrorEnvelope(error, c.requestId), 404);
  };

  const handle = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const url = toOriginForm(incoming.url ?? "/");
    const queryStart = url.indexOf("?");
    const path = decodePath(queryStart === -1 ? url : url.slice(0, queryStart));
    const method = incoming.method ?? "GET";
    const requestId = createRequestId();
    const startedAt = performance.now();
    if (method !== "GET" && method !== "HEAD") outgoing.once("close", drainBodyLeftUnread);
    const found = matcher.match(method === "HEAD" ? "GET" : method, path);
    const requestLog = new RequestLogEntry(requestId, method, found?.route.path, path, startedAt);
    requestLog.noteClient(incoming.headers);
    if (tracer !== undefined && !UNTRACED_ROUTES.has(found?.route.path)) {
      requestLog.trace = tracer.startRequest(incoming.headers.traceparent, incoming.headers.tracestate);
    }
    outgoing.once("close", () => requestLog.end(outgoing, report));
    const variables = { requestId, startedAt, logger, requestLog };
    if (cors?.handle(method, path, found?.route, incoming, outgoing, requestId)) return;
    const request = new RouteRequest(
      incoming,
      method,
      path,
      queryStart === -1 ? "" : url.slice(queryStart + 1),
      found?.params ?? {},
    );
    const c = new RouteContext(request, outgoing, variables, answerNotFound);
    let answer: RouteAnswer | Promise<RouteAnswer>;
    try {
      answer = found === undefined ? answerNoRoute(c) : found.route.handler(c);
    } catch (thrown) {
      answerUnhandled(thrown, c);
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (settled) => writeAnswer(settled, c),
        (thrown: unknown) => answerUnhandled(thrown, c),
      );
    } else {
      writeAnswer(answer, c);
    }
  };

  const markCorsAnswer: Router["markCorsAnswer"] = (path, incoming, outgoing) =>
    cors?.markAnswer(path, incoming, outgoing);
  return { handle, allowedMethods: matcher.allowedMethods, markCorsAnswer, report, routes };
}

/** An absolute-form request target (`GET http://host/path`) as the path and query it names. */
function toOriginForm(target: string): string {
  if (target.startsWith("/")) return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}

/** The path as matched: percent-encoded characters decoded, except those that delimit (`%2F`). */
function decodePath(path: string): string {
  if (!path.includes("%")) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** A request's body that its answer left unread: read off, or its connection dropped. */
function drainBodyLeftUnread(this: ServerResponse): void {
  if (!this.req.readableEnded) drainUnreadBody(this.req);
}

/** Writes a handler's web Response (its body whole: these answers are small) with the request id. */
function writeAnswer(answer: RouteAnswer, c: RouteContext): void {
  if (answer === ANSWERED) return;
  writeResponse(answer, c).catch((thrown: unknown) => answerUnhandled(thrown, c));
}

async function writeResponse(answer: Response, c: RouteContext): Promise<void> {
  const { outgoing } = c;
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers["x-request-id"] ??= c.requestId;
  const body = answer.body === null ? undefined : Buffer.from(await answer.arrayBuffer());
  c.requestLog.noteErrorBody(answer.status, body);
  if (body !== undefined) headers["content-length"] ??= String(body.byteLength);
  // Answered before its body fully arrived (a refusal that needed no body): the connection may be
  // dropped while the rest is read off (drain-unread-body.ts), so the client must not reuse it.
  if (!c.incoming.complete) headers.connection = "close";
  if (outgoing.destroyed) return;
  outgoing.writeHead(answer.status, headers);
  if (body === undefined || c.req.method === "HEAD") outgoing.end();
  else writeBody(outgoing, body, body.byteLength);
}

/** A handler that threw: the shared 500 answer, or a cut connection if its answer had begun. */
function answerUnhandled(thrown: unknown, c: RouteContext): void {
  const { outgoing } = c;
  const requestId = c.requestId;
  const logger = c.logger;
  if (outgoing.headersSent) {
    logger.error({ err: thrown, requestId }, "unhandled error after the answer began");
    outgoing.destroy();
    return;
  }
  const answer = createUnhandledErrorAnswer(thrown, requestId, logger);
  c.requestLog.errorCode = answer.code;
  sendJson(outgoing, answer.status, answer.headers, answer.body);
}
