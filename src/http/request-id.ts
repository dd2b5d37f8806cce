/**
 * Gives every request an id and echoes it in `X-Request-Id` on every response — errors and 404s
 * included. The id is ours, never the caller's: generation ids are derived from it.
 */
import { randomFillSync } from "node:crypto";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../logging/logger.js";
import type { AppEnv } from "./app-env.js";

const ID_BYTES = 16;
/** A request id: 16 bytes as base64url, 22 characters. */
export const REQUEST_ID_PATTERN = /[A-Za-z0-9_-]{22}/;
// One call into the CSPRNG per 256 ids: a call per request (randomBytes(16)) costs more than the
// rest of making an id.
const pool = Buffer.allocUnsafeSlow(4096);
let poolOffset = pool.length;

export function createRequestId(): string {
  if (poolOffset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  // 16 random bytes as base64url: 22 URL-safe characters, collision-free in practice.
  const id = pool.toString("base64url", poolOffset, poolOffset + ID_BYTES);
  poolOffset += ID_BYTES;
  return id;
}

export function requestIdMiddleware(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = createRequestId();
    c.set("requestId", requestId);
    c.set("startedAt", performance.now());
    c.set("logger", logger);
    await next();
    // Set after the route, not before: routes that build their own Response would drop headers
    // prepared on `c`. The generation routes wrote their answer (with the id) to the Node
    // response themselves; the shared RESPONSE_ALREADY_SENT must stay untouched.
    if (c.res === RESPONSE_ALREADY_SENT) return;
    if (!c.res.headers.has("X-Request-Id")) c.res.headers.set("X-Request-Id", requestId);
  };
}
