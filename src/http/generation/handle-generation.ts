/**
 * The HTTP side of every generation endpoint: authenticate, read the body, decode it in the
 * endpoint's format and hand it to the engine (start-generation.ts, the steps a Responses WebSocket
 * turn shares), and render the result, stream or error in that same format.
 *
 * The hottest path of the gateway, so it works on the Node request and response: body,
 * client-gone signal and answer, never a web Request, body stream or Response. Its route in the
 * table hands it the Node request and response (node-route-handler.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Authenticator } from "../../auth/authenticate.js";
import type { GenerationEngine } from "../../engine/generation-engine.js";
import type { GenerationRun } from "../../engine/generation-run.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import type { HeaderReader, IngressFormat, StreamEncoder } from "../../ingress/ingress-format.js";
import type { RequestShapeLimits } from "../../ingress/shared/check-request-shape.js";
import type { Headroom } from "../../limits/limit-counters.js";
import type { Logger } from "../../logging/logger.js";
import { readNodeJsonBody } from "../json/read-json-body.js";
import { createRequestJsonShape } from "../json/request-json-shape.js";
import { createClientGoneSignal } from "../router/client-gone-signal.js";
import { createErrorResponseHeaders } from "../router/error-response.js";
import type { RequestLogEntry } from "../router/request-log.js";
import { sendJson } from "../router/send-json.js";
import { type CostQuoteDeps, DRY_RUN_HEADER, quoteGeneration, readDryRunHeader } from "./cost-quote.js";
import { createDroppedHeader } from "./dropped-header.js";
import { addHeadroomHeaders } from "./headroom-headers.js";
import { writeSseResponse } from "./sse-response.js";
import { type GenerationStartInput, startGeneration } from "./start-generation.js";

export interface GenerationRouteDeps {
  engine: GenerationEngine;
  authenticator: Authenticator;
  maxBodyBytes: number;
  /** Caps on messages, content blocks and tools, checked before the body is decoded. */
  requestShape: RequestShapeLimits;
  keepAliveMs?: number;
  /** How long a client may take nothing while its answer (streamed or not) waits for it. */
  clientReadTimeoutMs?: number;
  /** Cost quotes (`X-Hi-Dry-Run: 1`); absent: a dry run is refused, never run for real. */
  quotes?: CostQuoteDeps;
}

type Answer =
  | { kind: "json"; status: number; headers: Record<string, string>; body: string }
  | { kind: "stream"; run: GenerationRun; encoder: StreamEncoder; headroom: Headroom | undefined };

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
  const jsonShape = createRequestJsonShape(deps.requestShape);
  return async ({ incoming, outgoing, headers, requestId, startedAt, logger, requestLog }) => {
    const signal = createClientGoneSignal(outgoing);
    requestLog.format = format.name;
    let answer: Answer;
    try {
      const caller = await deps.authenticator.authenticate(readApiKey(headers));
      requestLog.caller = caller;
      const body = await readNodeJsonBody(incoming, deps.maxBodyBytes, jsonShape);
      const dryRun = readDryRunHeader(headers.get(DRY_RUN_HEADER));
      const exchange = { caller, body, headers, requestId, startedAt, requestLog, signal };
      answer =
        dryRun === false
          ? await answerGeneration(format, deps, exchange)
          : await answerQuote(format, deps.quotes, dryRun, exchange);
    } catch (thrown) {
      // The instance ended the request (shutdown): its reason is the answer, whatever the upstream
      // call threw when it was stopped.
      const error = signal.reason instanceof GatewayError ? signal.reason : toGatewayError(thrown);
      // A caller that went away is not a gateway failure (its usage is settled as cancelled).
      if (error.code === "internal_error" && !signal.aborted) {
        logger.error({ err: thrown, requestId }, "generation failed");
      }
      requestLog.noteError(error.code, error.param, error.message);
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
        // Before the first byte: the headroom is known since admission, the losses since the route.
        headers: addHeadroomHeaders(createDroppedHeader(answer.run.dropped), answer.headroom),
      });
    } else {
      sendJson(outgoing, answer.status, answer.headers, answer.body, deps.clientReadTimeoutMs);
    }
  };
}

async function answerGeneration(
  format: IngressFormat,
  deps: GenerationRouteDeps,
  input: GenerationStartInput,
): Promise<Answer> {
  const { run, context, headroom } = await startGeneration(format, deps, input);
  if (run.result === undefined) {
    return { kind: "stream", run, encoder: format.createStreamEncoder(context), headroom };
  }
  const settlement = await run.settle();
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Request-Id": input.requestId,
    ...createDroppedHeader(run.dropped),
  };
  return {
    kind: "json",
    status: 200,
    headers: addHeadroomHeaders(headers, headroom),
    body: JSON.stringify(format.encodeResult(run.result, settlement, context)),
  };
}

/** A cost quote instead of the generation (cost-quote.ts); the same JSON in every format. */
async function answerQuote(
  format: IngressFormat,
  quotes: CostQuoteDeps | undefined,
  dryRun: true | "invalid",
  input: GenerationStartInput,
): Promise<Answer & { kind: "json" }> {
  if (dryRun === "invalid") {
    throw GatewayError.invalidRequest("X-Hi-Dry-Run must be 1 or true (or 0, false)", "X-Hi-Dry-Run");
  }
  if (quotes === undefined) {
    throw new GatewayError("internal_error", "Cost quotes are not available on this gateway");
  }
  const quote = await quoteGeneration(format, quotes, input);
  return {
    kind: "json",
    status: 200,
    headers: { "Content-Type": "application/json", "X-Request-Id": input.requestId, "X-Hi-Dry-Run": "1" },
    body: JSON.stringify(quote),
  };
}
