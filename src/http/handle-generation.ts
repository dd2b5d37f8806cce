/**
 * The HTTP side of every generation endpoint: authenticate, read and decode the body in the
 * endpoint's format, hand the canonical request to the engine, and render the result, stream or
 * error in that same format.
 *
 * The hottest path of the gateway, so it works on the Node request and response underneath Hono
 * (body, client-gone signal, answer) and never makes @hono/node-server build the web Request,
 * its body stream or a web Response; it tells the adapter so with RESPONSE_ALREADY_SENT.
 */
// Must stay a static import: the constant has to be built before serve() swaps the global
// Response for the adapter's own class, or the adapter would try to write it as an answer.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { Authenticator } from "../auth/authenticate.js";
import type { GenerationEngine } from "../engine/generation-engine.js";
import type { GenerationStream } from "../engine/generation-stream.js";
import { toGatewayError } from "../errors/gateway-error.js";
import type { IngressFormat, StreamEncoder } from "../ingress/ingress-format.js";
import type { AppEnv } from "./app-env.js";
import { createClientGoneSignal } from "./client-gone-signal.js";
import { createErrorResponseHeaders } from "./error-response.js";
import { readNodeJsonBody } from "./read-json-body.js";
import { sendJson } from "./send-json.js";
import { KEEP_ALIVE_INTERVAL_MS, writeSseResponse } from "./sse-response.js";

export interface GenerationRouteDeps {
  engine: GenerationEngine;
  authenticator: Authenticator;
  maxBodyBytes: number;
  keepAliveMs?: number;
}

type Answer =
  | { kind: "json"; status: number; headers: Record<string, string>; body: string }
  | { kind: "stream"; stream: GenerationStream; encoder: StreamEncoder };

export function createGenerationHandler(
  format: IngressFormat,
  deps: GenerationRouteDeps,
  readApiKey: (c: Context<AppEnv>) => string | undefined,
) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const { incoming, outgoing } = c.env;
    const requestId = c.get("requestId");
    const logger = c.get("logger");
    const signal = createClientGoneSignal(outgoing);
    let answer: Answer;
    try {
      const caller = await deps.authenticator.authenticate(readApiKey(c));
      const body = await readNodeJsonBody(incoming, deps.maxBodyBytes);
      // The lightweight headers of @hono/node-server: reads go to the Node request's headers.
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
        answer = { kind: "stream", stream, encoder: format.createStreamEncoder(context) };
      } else {
        const { result, settlement } = await deps.engine.generate(admitted, signal);
        answer = {
          kind: "json",
          status: 200,
          headers: { "Content-Type": "application/json", "X-Request-Id": requestId },
          body: JSON.stringify(format.encodeResult(result, settlement, context)),
        };
      }
    } catch (thrown) {
      const error = toGatewayError(thrown);
      // A caller that went away is not a gateway failure (its usage is settled as cancelled).
      if (error.code === "internal_error" && !signal.aborted) {
        logger.error({ err: thrown, requestId }, "generation failed");
      }
      answer = {
        kind: "json",
        status: error.status,
        headers: createErrorResponseHeaders(error, requestId),
        body: JSON.stringify(format.encodeError(error, requestId)),
      };
    }
    // Written once, after every step that can throw, so an error can never follow a started answer.
    if (answer.kind === "stream") {
      writeSseResponse(outgoing, answer.stream, answer.encoder, {
        requestId,
        logger,
        signal,
        keepAliveMs: deps.keepAliveMs,
      });
    } else {
      sendJson(outgoing, answer.status, answer.headers, answer.body);
    }
    return RESPONSE_ALREADY_SENT;
  };
}
