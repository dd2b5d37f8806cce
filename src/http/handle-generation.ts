/**
 * The HTTP side of every generation endpoint: authenticate, read and decode the body in the
 * endpoint's format, hand the canonical request to the engine, and render the result, stream or
 * error in that same format.
 *
 * The hottest path of the gateway, so it works on the Node request and response: body,
 * client-gone signal and answer, never a web Request, body stream or Response. Its route in the
 * table hands it the Node request and response (node-route-handler.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Authenticator } from "../auth/authenticate.js";
import type { GenerationEngine } from "../engine/generation-engine.js";
import type { GenerationRun } from "../engine/generation-run.js";
import { YIELD_AFTER_MS, yieldToEventLoop } from "../engine/yield-to-event-loop.js";
import { GatewayError, toGatewayError } from "../errors/gateway-error.js";
import type { HeaderReader, IngressFormat, StreamEncoder } from "../ingress/ingress-format.js";
import { checkRequestShape, type RequestShapeLimits } from "../ingress/shared/check-request-shape.js";
import type { Logger } from "../logging/logger.js";
import { createClientGoneSignal } from "./client-gone-signal.js";
import { createErrorResponseHeaders } from "./error-response.js";
import { readNodeJsonBody } from "./read-json-body.js";
import type { RequestLogEntry } from "./request-log.js";
import { sendJson } from "./send-json.js";
import { KEEP_ALIVE_INTERVAL_MS, writeSseResponse } from "./sse-response.js";

export interface GenerationRouteDeps {
  engine: GenerationEngine;
  authenticator: Authenticator;
  maxBodyBytes: number;
  /** Caps on messages, content blocks and tools, checked before the body is decoded. */
  requestShape: RequestShapeLimits;
  keepAliveMs?: number;
  /** How long a streaming client may take nothing while output waits for it. */
  clientReadTimeoutMs?: number;
}

type Answer =
  | { kind: "json"; status: number; headers: Record<string, string>; body: string }
  | { kind: "stream"; run: GenerationRun; encoder: StreamEncoder };

/** One request on a generation endpoint, as its route hands it over. */
export interface GenerationExchange {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  headers: HeaderReader;
  requestId: string;
  /** performance.now() when the request arrived. */
  startedAt: number;
  logger: Logger;
  /** The request's log line: the caller, the model and the engine's settlement go on it. */
  requestLog: RequestLogEntry;
}

/** Answers one generation request on the Node response; settles when the answer is under way. */
export type GenerationHandler = (exchange: GenerationExchange) => Promise<void>;

export function createGenerationHandler(
  format: IngressFormat,
  deps: GenerationRouteDeps,
  readApiKey: (headers: HeaderReader) => string | undefined,
): GenerationHandler {
  return async ({ incoming, outgoing, headers, requestId, startedAt, logger, requestLog }) => {
    const signal = createClientGoneSignal(outgoing);
    requestLog.format = format.name;
    let answer: Answer;
    try {
      const caller = await deps.authenticator.authenticate(readApiKey(headers));
      requestLog.caller = caller;
      const body = await readNodeJsonBody(incoming, deps.maxBodyBytes);
      const decodeStarted = performance.now();
      checkRequestShape(body, format.name, deps.requestShape);
      const request = format.decode(body, headers);
      requestLog.model = request.model;
      requestLog.stream = request.stream;
      if (performance.now() - decodeStarted > YIELD_AFTER_MS) await yieldToEventLoop();
      // Ended by the instance (shutdown) while the body was read: not admitted, nothing to settle.
      if (signal.reason instanceof GatewayError) throw signal.reason;
      const admitted = await deps.engine.admit({
        requestId,
        format: format.name,
        caller,
        request,
        startedAt,
        trace: requestLog.trace,
      });
      requestLog.settled = admitted.settled;
      // From here the line and the metrics name the catalog slug the name resolved to.
      requestLog.model = admitted.record.model;
      // The run decides everything from here: which route serves, and (with `stream`) whether
      // the answer is parts or one folded result. It settles itself on every way out.
      const run = await deps.engine.run(admitted, signal, deps.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS);
      // The response names the catalog slug that served (an alternative, after a fallback), never
      // the name as the client sent it.
      const model = run.servedBy?.model.slug ?? admitted.record.model;
      const context = { requestId, model, createdAt: Math.floor(Date.now() / 1000), request };
      if (run.result === undefined) {
        answer = { kind: "stream", run, encoder: format.createStreamEncoder(context) };
      } else {
        const settlement = await run.settle();
        answer = {
          kind: "json",
          status: 200,
          headers: { "Content-Type": "application/json", "X-Request-Id": requestId },
          body: JSON.stringify(format.encodeResult(run.result, settlement, context)),
        };
      }
    } catch (thrown) {
      // The instance ended the request (shutdown): its reason is the answer, whatever the upstream
      // call threw when it was stopped.
      const error = signal.reason instanceof GatewayError ? signal.reason : toGatewayError(thrown);
      // A caller that went away is not a gateway failure (its usage is settled as cancelled).
      if (error.code === "internal_error" && !signal.aborted) {
        logger.error({ err: thrown, requestId }, "generation failed");
      }
      requestLog.errorCode = error.code;
      answer = {
        kind: "json",
        status: error.status,
        headers: createErrorResponseHeaders(error, requestId),
        body: JSON.stringify(format.encodeError(error, requestId)),
      };
    }
    // Written once, after every step that can throw, so an error can never follow a started answer.
    requestLog.firstByteAt = performance.now();
    if (answer.kind === "stream") {
      writeSseResponse(outgoing, answer.run, answer.encoder, {
        requestId,
        logger,
        signal,
        keepAliveMs: deps.keepAliveMs,
        clientReadTimeoutMs: deps.clientReadTimeoutMs,
      });
    } else {
      sendJson(outgoing, answer.status, answer.headers, answer.body);
    }
  };
}
