/**
 * The HTTP side of every generation endpoint: authenticate, read and decode the body in the
 * endpoint's format, hand the canonical request to the engine, and render the result, stream or
 * error in that same format.
 */
import type { Context } from "hono";
import type { Authenticator } from "../auth/authenticate.js";
import type { GenerationEngine } from "../engine/generation-engine.js";
import { toGatewayError } from "../errors/gateway-error.js";
import type { IngressFormat } from "../ingress/ingress-format.js";
import type { AppEnv } from "./app-env.js";
import { createClientGoneSignal } from "./client-gone-signal.js";
import { createErrorResponse } from "./error-response.js";
import { readNodeJsonBody } from "./read-json-body.js";
import { createSseResponse, KEEP_ALIVE_INTERVAL_MS } from "./sse-response.js";

export interface GenerationRouteDeps {
  engine: GenerationEngine;
  authenticator: Authenticator;
  maxBodyBytes: number;
  keepAliveMs?: number;
}

export function createGenerationHandler(
  format: IngressFormat,
  deps: GenerationRouteDeps,
  readApiKey: (c: Context<AppEnv>) => string | undefined,
) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const requestId = c.get("requestId");
    const logger = c.get("logger");
    const signal = createClientGoneSignal(c.env.outgoing);
    try {
      const caller = await deps.authenticator.authenticate(readApiKey(c));
      const body = await readNodeJsonBody(c.env.incoming, deps.maxBodyBytes);
      const request = format.decode(body, c.req.raw.headers);
      const admitted = await deps.engine.admit({
        requestId,
        format: format.name,
        caller,
        request,
        startedAt: c.get("startedAt"),
      });
      const context = { requestId, model: request.model, createdAt: Math.floor(Date.now() / 1000), request };
      if (request.stream) {
        const stream = await deps.engine.openStream(
          admitted,
          signal,
          deps.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS,
        );
        return createSseResponse(stream, format.createStreamEncoder(context), {
          requestId,
          logger,
          signal,
          keepAliveMs: deps.keepAliveMs,
        });
      }
      const { result, settlement } = await deps.engine.generate(admitted, signal);
      return c.json(format.encodeResult(result, settlement, context) as object);
    } catch (thrown) {
      const error = toGatewayError(thrown);
      // A caller that went away is not a gateway failure (its usage is settled as cancelled).
      if (error.code === "internal_error" && !signal.aborted) {
        logger.error({ err: thrown, requestId }, "generation failed");
      }
      return createErrorResponse(error, format.encodeError(error, requestId), requestId);
    }
  };
}
