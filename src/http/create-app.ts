/**
 * The HTTP application: the router built from the route table (create-routes.ts), with the answers
 * for what the table does not serve. Every request that finds room (request-listener.ts) comes here.
 *
 * Each route's handler is wrapped with what every request needs (a request id, its arrival time,
 * the logger, `X-Request-Id` on the answer) instead of running a middleware: a request that matches
 * one handler is then dispatched by Hono straight to it, without a middleware chain.
 */
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import { createCommonErrorEnvelope } from "../errors/envelopes.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Logger } from "../logging/logger.js";
import type { AppEnv } from "./app-env.js";
import { createRoutes, type RouteDependencies } from "./create-routes.js";
import { createUnhandledErrorAnswer } from "./error-response.js";
import { findAllowedMethods } from "./find-allowed-methods.js";
import { createRequestId } from "./request-id.js";
import type { RouteDefinition, RouteHandler } from "./route-definition.js";

export interface AppDependencies extends RouteDependencies {
  logger: Logger;
}

/** The application and the table it serves (one entry per method and path). */
export interface GatewayHttp {
  app: Hono<AppEnv>;
  routes: readonly RouteDefinition[];
}

export function createApp(deps: AppDependencies): GatewayHttp {
  const routes = createRoutes(deps);
  return { app: createRouter(routes, deps.logger), routes };
}

/** A Hono application serving exactly `routes`. */
export function createRouter(routes: readonly RouteDefinition[], logger: Logger): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const route of routes) app.on(route.method, toRouterPath(route), withRequestId(route.handler, logger));

  // A path served under other methods answers 405 with Allow; a path served under none, 404.
  app.notFound((c) => {
    const requestId = readRequestId(c, logger);
    const allowed = findAllowedMethods(app, c.req.path);
    // A route of this very method that answered notFound itself (an unknown file under /docs or
    // /console) is a 404, not a 405.
    const servedForMethod = allowed.includes(c.req.method);
    c.header("X-Request-Id", requestId);
    if (allowed.length > 0 && !servedForMethod) {
      const error = GatewayError.invalidRequest(
        `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(", ")}`,
        null,
      );
      c.header("Allow", allowed.join(", "));
      return c.json(createCommonErrorEnvelope(error, requestId), 405);
    }
    const error = GatewayError.invalidRequest(`No route for ${c.req.method} ${c.req.path}`, null);
    return c.json(createCommonErrorEnvelope(error, requestId), 404);
  });
  app.onError((thrown, c) => {
    const answer = createUnhandledErrorAnswer(thrown, readRequestId(c, logger), logger);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return app;
}

/** `{name}` → `:name`, with the route's pattern for a parameter that spans segments. */
function toRouterPath(route: RouteDefinition): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const pattern = route.paramPatterns?.[name];
    return pattern === undefined ? `:${name}` : `:${name}{${pattern}}`;
  });
}

/**
 * Gives the request its id (ours, never the caller's: generation ids are derived from it) and
 * echoes it in `X-Request-Id`. Set after the handler, not before: a handler that builds its own
 * Response would drop headers prepared on `c`. Handlers that wrote their answer to the Node
 * response themselves (with the id) return the shared RESPONSE_ALREADY_SENT, left untouched.
 */
function withRequestId(handler: RouteHandler, logger: Logger): RouteHandler {
  return async (c) => {
    const requestId = createRequestId();
    c.set("requestId", requestId);
    c.set("startedAt", performance.now());
    c.set("logger", logger);
    const response = await handler(c);
    if (response !== RESPONSE_ALREADY_SENT && !response.headers.has("X-Request-Id")) {
      response.headers.set("X-Request-Id", requestId);
    }
    return response;
  };
}

/** The id of a request a route took, or a fresh one for a request no route took. */
function readRequestId(c: Context<AppEnv>, logger: Logger): string {
  const requestId = c.get("requestId");
  if (requestId !== undefined) return requestId;
  const fresh = createRequestId();
  c.set("requestId", fresh);
  c.set("startedAt", performance.now());
  c.set("logger", logger);
  return fresh;
}
