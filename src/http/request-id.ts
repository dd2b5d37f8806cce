/**
 * Gives every request an id and echoes it in `X-Request-Id` on every response — errors and 404s
 * included. The id is ours, never the caller's: generation ids are derived from it.
 */
import { randomBytes } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../logging/logger.js";
import type { AppEnv } from "./app-env.js";

export function createRequestId(): string {
  // 16 random bytes as base64url: 22 URL-safe characters, collision-free in practice.
  return randomBytes(16).toString("base64url");
}

export function requestIdMiddleware(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = createRequestId();
    c.set("requestId", requestId);
    c.set("startedAt", performance.now());
    c.set("logger", logger);
    c.header("X-Request-Id", requestId);
    await next();
    // Responses built outside c (e.g. by onError) must carry it too.
    if (!c.res.headers.has("X-Request-Id")) c.res.headers.set("X-Request-Id", requestId);
  };
}
