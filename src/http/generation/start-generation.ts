/**
 * The steps every generation request takes once its caller is known and its body parsed, whatever
 * carried it (a POST on a generation endpoint, handle-generation.ts, or a turn of a Responses
 * WebSocket, responses-socket/): the request-shape caps, the decode in the endpoint's format,
 * admission (limits, reservation, in-progress record) and the start of the engine's run. One path,
 * so a turn over a socket is admitted, metered and settled exactly as the same request over HTTP.
 */
import type { AuthenticatedCaller } from "../../auth/authenticate.js";
import type { GenerationEngine, GenerationInput } from "../../engine/generation-engine.js";
import type { GenerationRun } from "../../engine/generation-run.js";
import type { ClientSignal } from "../../engine/ports.js";
import { YIELD_AFTER_MS, yieldToEventLoop } from "../../engine/yield-to-event-loop.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext, HeaderReader, IngressFormat } from "../../ingress/ingress-format.js";
import { checkRequestShape, type RequestShapeLimits } from "../../ingress/shared/check-request-shape.js";
import type { Headroom } from "../../limits/limit-counters.js";
import type { RequestLogEntry } from "../router/request-log.js";
import { KEEP_ALIVE_INTERVAL_MS } from "./sse-response.js";

export interface GenerationStartDeps {
  engine: GenerationEngine;
  /** Caps on messages, content blocks and tools, checked before the body is decoded. */
  requestShape: RequestShapeLimits;
  keepAliveMs?: number;
}

export interface GenerationStartInput {
  caller: AuthenticatedCaller;
  body: unknown;
  headers: HeaderReader;
  requestId: string;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** The request's log line: the model and the engine's settlement go on it. */
  requestLog: RequestLogEntry;
  /** Fires when the client leaves; a GatewayError reason: the instance ends the request. */
  signal: ClientSignal;
}

export interface StartedGeneration {
  /** Settles itself; `result` is set when the request did not ask for a stream. */
  run: GenerationRun;
  /** What the key's limits leave after its reservation (headroom-headers.ts); absent without a limit. */
  headroom: Headroom | undefined;
  /** What the format's encoders need: the id, the catalog slug that served, the request. */
  context: EncodeContext;
}

/**
 * The request as admission gets it: the shape caps checked, the body decoded in the endpoint's
 * format. Shared by a real start and a cost quote (cost-quote.ts), so both admit the same request.
 */
export async function decodeGeneration(
  format: IngressFormat,
  deps: Pick<GenerationStartDeps, "requestShape">,
  input: GenerationStartInput,
): Promise<GenerationInput> {
  const { requestLog, signal, requestId } = input;
  const decodeStarted = performance.now();
  checkRequestShape(input.body, format.name, deps.requestShape);
  const request = format.decode(input.body, input.headers);
  requestLog.model = request.model;
  requestLog.stream = request.stream;
  if (performance.now() - decodeStarted > YIELD_AFTER_MS) await yieldToEventLoop();
  // Ended by the instance (shutdown) while the body was read: not admitted, nothing to settle.
  if (signal.reason instanceof GatewayError) throw signal.reason;
  return {
    requestId,
    format: format.name,
    caller: input.caller,
    request,
    startedAt: input.startedAt,
    trace: requestLog.trace,
    // Read off the request's headers (or the socket's handshake) for the log line; the record keeps them.
    sessionId: requestLog.sessionId,
    client: requestLog.client,
  };
}

export async function startGeneration(
  format: IngressFormat,
  deps: GenerationStartDeps,
  input: GenerationStartInput,
): Promise<StartedGeneration> {
  const { requestLog, signal, requestId } = input;
  const generation = await decodeGeneration(format, deps, input);
  const { request } = generation;
  const admitted = await deps.engine.admit(generation);
  requestLog.settled = admitted.settled;
  // From here the line and the metrics name the catalog slug the name resolved to.
  requestLog.model = admitted.record.model;
  // The run decides everything from here: which route serves, and (with `stream`) whether the
  // answer is parts or one folded result. It settles itself on every way out.
  const run = await deps.engine.run(admitted, signal, deps.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS);
  // The response names the catalog slug that served (an alternative, after a fallback), never the
  // name as the client sent it.
  const model = run.servedBy?.model.slug ?? admitted.record.model;
  const context: EncodeContext = {
    requestId,
    model,
    createdAt: Math.floor(Date.now() / 1000),
    request,
    estimateInputTokens: () => deps.engine.estimatePromptTokens(admitted),
  };
  return { run, context, headroom: admitted.reservation.headroom };
}
