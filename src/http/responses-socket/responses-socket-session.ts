/**
 * One open Responses WebSocket: its client messages, its turns, what it keeps between them, its
 * keep-alive and its deadlines (docs/formats.md, "WebSocket mode").
 *
 * - Each `response.create` is one turn, and each turn one generation request with its own request
 *   id, log line and usage record: authenticated with the handshake's key (so a key revoked or
 *   over its limits meanwhile is refused on its next turn), counted in flight, and admitted,
 *   metered and settled by the same steps as `POST /api/v1/responses` (start-generation.ts).
 * - Turns run one at a time, in the order their messages arrived. Messages that arrive during a
 *   turn wait, at most MAX_WAITING_MESSAGES of them and at most the body cap of bytes together;
 *   beyond that a message is refused with an `error` event.
 * - A turn refused before its stream began is answered with an `error` event
 *   (socket-error-event.ts); the socket stays open, except for a key that is no longer valid.
 * - Keep-alive: a ping every keep-alive interval; a client that answered none (and sent nothing)
 *   for `clientReadTimeoutMs` is disconnected. Client pings are answered by the WebSocket library.
 * - Idle: with no turn running or waiting and no message for `idleTimeoutMs`, the socket is closed
 *   (1000), and what it kept goes with it.
 * - Draining (shutdown): the turn in progress runs on; messages waiting or arriving are refused
 *   with the shutdown error, and the socket is closed with 1001 once no turn runs.
 */
import type { WebSocket } from "ws";
import type { Authenticator } from "../../auth/authenticate.js";
import { createEmptyUsage } from "../../canonical/result.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import type { HeaderReader, IngressFormat } from "../../ingress/ingress-format.js";
import { checkRequestShape } from "../../ingress/shared/check-request-shape.js";
import type { Logger } from "../../logging/logger.js";
import type { RequestTracer } from "../../observability/index.js";
import { type GenerationStartDeps, startGeneration } from "../generation/start-generation.js";
import { createRequestJsonShape } from "../json/request-json-shape.js";
import type { InFlightRequests, InFlightTurn } from "../router/in-flight-requests.js";
import { createRequestId } from "../router/request-id.js";
import { CLIENT_CLOSED_STATUS, RequestLogEntry, type RequestReporter } from "../router/request-log.js";
import { createDroppedDecorator } from "./dropped-decorator.js";
import { buildTurnBody, type KeptResponse, keepResponse, type TurnBody } from "./previous-response-memory.js";
import { readClientEvent } from "./read-client-event.js";
import { createLaneDecorator, createSocketErrorEvent } from "./socket-error-event.js";
import { splitSseEvents } from "./split-sse-events.js";
import { writeSocketTurn } from "./write-socket-turn.js";

/** The path the mode is served on; a turn's log line names it as its route. */
export const RESPONSES_SOCKET_PATH = "/api/v1/responses";
/** The method a turn's log line shows: a turn is not an HTTP request of its own. */
export const SOCKET_TURN_METHOD = "WS";
/** Messages that may wait behind the turn in progress. */
export const MAX_WAITING_MESSAGES = 16;

export interface ResponsesSocketSessionDeps {
  /** The responses format (with the item seal the HTTP endpoint uses). */
  format: IngressFormat;
  authenticator: Authenticator;
  generation: GenerationStartDeps;
  /** The body cap: the largest message, and the most a socket keeps of its last response. */
  maxMessageBytes: number;
  clientReadTimeoutMs: number;
  idleTimeoutMs: number;
  pingIntervalMs: number;
  logger: Logger;
  report: RequestReporter;
  tracer?: RequestTracer;
  inFlight?: InFlightRequests;
}

/** What the handshake established: the key every turn is authenticated with, its headers. */
export interface SocketHandshake {
  apiKey: string;
  headers: HeaderReader;
  traceparent: string | string[] | undefined;
  tracestate: string | string[] | undefined;
  /** The handshake's session header and client name, logged with every turn. */
  sessionId?: string;
  client?: string;
}

export class ResponsesSocketSession {
  /** Resolves once the socket has closed. */
  readonly closed: Promise<void>;
  private readonly waiting: Buffer[] = [];
  private waitingBytes = 0;
  private turnRunning = false;
  /** The last response, for `previous_response_id` (previous-response-memory.ts). */
  private kept: KeptResponse | undefined;
  /** Aborts the turn in progress: the client left (an Error), or the instance ends it (a GatewayError). */
  private turnAbort: AbortController | undefined;
  private draining = false;
  private isClosed = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly pingTimer: NodeJS.Timeout;
  /** performance.now() of the client's last pong or message. */
  private lastHeardAt = performance.now();
  private resolveClosed!: () => void;

  constructor(
    private readonly socket: WebSocket,
    private readonly handshake: SocketHandshake,
    private readonly deps: ResponsesSocketSessionDeps,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.on("message", (data, isBinary) => this.receive(data as Buffer, isBinary));
    socket.on("pong", () => {
      this.lastHeardAt = performance.now();
    });
    // Protocol errors (a message over the cap, invalid UTF-8): the library closes the socket with
    // the matching code (1009, 1007) right after.
    socket.on("error", (error) => deps.logger.debug({ err: error }, "responses websocket error"));
    socket.on("close", () => this.onClose());
    this.pingTimer = setInterval(() => this.ping(), deps.pingIntervalMs);
    this.pingTimer.unref();
    this.armIdleDeadline();
  }

  /** No new turn from now on; the socket closes once the turn in progress (if any) has ended. */
  startDraining(): void {
    this.draining = true;
    if (!this.turnRunning) this.refuseWaitingAndClose();
  }

  /** Closes the socket now (1001), ending a turn still in progress with `reason`. */
  end(reason: GatewayError): void {
    this.turnAbort?.abort(reason);
    this.close(1001, "server shutting down");
  }

  /** Drops the connection without a closing handshake (a client that does not answer it). */
  terminate(): void {
    this.socket.terminate();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    this.lastHeardAt = performance.now();
    if (isBinary) {
      this.refuseMessage(
        GatewayError.invalidRequest("Binary messages are not accepted; send each event as JSON text", null),
      );
      return;
    }
    if (this.draining) {
      this.refuseMessage(createShutdownError());
      if (!this.turnRunning) this.refuseWaitingAndClose();
      return;
    }
    if (
      this.waiting.length >= MAX_WAITING_MESSAGES ||
      this.waitingBytes + data.byteLength > this.deps.maxMessageBytes
    ) {
      this.refuseMessage(
        GatewayError.invalidRequest(
          `Too many messages are waiting on this connection (at most ${MAX_WAITING_MESSAGES}, and ` +
            `${this.deps.maxMessageBytes} bytes together); send the next response.create after the ` +
            "previous response ended",
          null,
        ),
      );
      return;
    }
    clearTimeout(this.idleTimer);
    this.waiting.push(data);
    this.waitingBytes += data.byteLength;
    this.runNext();
  }

  private runNext(): void {
    if (this.turnRunning || this.isClosed) return;
    if (this.draining) {
      this.refuseWaitingAndClose();
      return;
    }
    const next = this.waiting.shift();
    if (next === undefined) {
      this.armIdleDeadline();
      return;
    }
    this.waitingBytes -= next.byteLength;
    this.turnRunning = true;
    void this.runTurn(next).finally(() => {
      this.turnRunning = false;
      this.runNext();
    });
  }

  private async runTurn(message: Buffer): Promise<void> {
    const requestId = createRequestId();
    const startedAt = performance.now();
    let event: Awaited<ReturnType<typeof readClientEvent>> | GatewayError;
    try {
      event = await readClientEvent(message, createRequestJsonShape(this.deps.generation.requestShape));
    } catch (thrown) {
      event = toGatewayError(thrown);
    }
    if (!(event instanceof GatewayError) && event.type === "ignored") return;
    const { deps, handshake } = this;
    const requestLog = new RequestLogEntry(
      requestId,
      SOCKET_TURN_METHOD,
      RESPONSES_SOCKET_PATH,
      RESPONSES_SOCKET_PATH,
      startedAt,
    );
    requestLog.format = deps.format.name;
    requestLog.sessionId = handshake.sessionId;
    requestLog.client = handshake.client;
    requestLog.trace = deps.tracer?.startRequest(handshake.traceparent, handshake.tracestate);
    const abort = new AbortController();
    let ticket: InFlightTurn | undefined;
    let decorate = createLaneDecorator(undefined);
    let status = 200;
    try {
      if (event instanceof GatewayError) throw event;
      decorate = createLaneDecorator(event.streamId);
      const entered = deps.inFlight?.enterTurn((reason) => abort.abort(reason));
      if (entered instanceof GatewayError) throw entered;
      ticket = entered;
      this.turnAbort = abort;
      const caller = await deps.authenticator.authenticate(handshake.apiKey);
      requestLog.caller = caller;
      const turn = buildTurnBody(event, message.byteLength, this.kept, deps.maxMessageBytes);
      if (!event.generate) {
        this.warmUp(turn, requestId, requestLog, decorate);
        return;
      }
      const { run, context } = await startGeneration(deps.format, deps.generation, {
        caller,
        body: turn.body,
        headers: handshake.headers,
        requestId,
        startedAt,
        requestLog,
        signal: abort.signal,
      });
      requestLog.firstByteAt = performance.now();
      // The drop report, which HTTP sends as X-Hi-Dropped, rides on the response objects.
      const withLane = decorate;
      const withDropped = createDroppedDecorator(run.dropped);
      const end = await writeSocketTurn(this.socket, run, deps.format.createStreamEncoder(context), {
        requestId,
        logger: deps.logger,
        signal: abort.signal,
        clientReadTimeoutMs: deps.clientReadTimeoutMs,
        decorate: (sent) => withLane(withDropped(sent)),
      });
      if (end.finalEvent !== undefined) this.keep(turn, end.finalEvent);
    } catch (thrown) {
      // The instance ended the turn (shutdown): its reason is the answer, whatever the upstream
      // call threw when it was stopped.
      const reason = abort.signal.reason;
      const error = reason instanceof GatewayError ? reason : toGatewayError(thrown);
      if (error.code === "internal_error" && !abort.signal.aborted) {
        deps.logger.error({ err: thrown, requestId }, "socket turn failed");
      }
      requestLog.noteError(error.code, error.param, error.message);
      status = this.isClosed ? CLIENT_CLOSED_STATUS : error.status;
      this.sendEvent(decorate(createSocketErrorEvent(error, requestId)));
      // The handshake's key no longer opens anything: no turn on this socket can succeed.
      if (error.code === "invalid_api_key") this.close(1008, "API key no longer valid");
    } finally {
      ticket?.leave();
      this.turnAbort = undefined;
      requestLog.endAs(status, deps.report);
    }
  }

  /**
   * `generate: false`: the request is checked and decoded (so its errors surface now), and answered
   * with an empty completed response whose id the next turn may continue from. No generation, no
   * upstream call, no usage record.
   */
  private warmUp(
    turn: TurnBody,
    requestId: string,
    requestLog: RequestLogEntry,
    decorate: (e: string) => string,
  ) {
    const { format, generation } = this.deps;
    checkRequestShape(turn.body, format.name, generation.requestShape);
    const request = format.decode(turn.body, this.handshake.headers);
    requestLog.model = request.model;
    requestLog.stream = true;
    requestLog.firstByteAt = performance.now();
    const encoder = format.createStreamEncoder({
      requestId,
      model: request.model,
      createdAt: Math.floor(Date.now() / 1000),
      request,
    });
    const events = splitSseEvents(
      encoder.finish({ usage: createEmptyUsage(), costMicroUsd: 0, finishReason: "stop" }),
    );
    for (const event of events) this.sendEvent(decorate(event));
    const finalEvent = events.at(-1);
    if (finalEvent !== undefined) this.keep(turn, finalEvent);
  }

  /** Keeps the turn's input and the final response's output for the next turn (or forgets both). */
  private keep(turn: TurnBody, finalEvent: string): void {
    const { response } = JSON.parse(finalEvent) as { response: { id: string; output: unknown[] } };
    this.kept = keepResponse(
      response.id,
      turn,
      response.output,
      Buffer.byteLength(finalEvent),
      this.deps.maxMessageBytes,
    );
  }

  /** A message refused before it became a turn: its `error` event and its log line. */
  private refuseMessage(error: GatewayError): void {
    const requestId = createRequestId();
    const requestLog = new RequestLogEntry(
      requestId,
      SOCKET_TURN_METHOD,
      RESPONSES_SOCKET_PATH,
      RESPONSES_SOCKET_PATH,
      performance.now(),
    );
    requestLog.format = this.deps.format.name;
    requestLog.sessionId = this.handshake.sessionId;
    requestLog.client = this.handshake.client;
    requestLog.noteError(error.code, error.param, error.message);
    this.sendEvent(createSocketErrorEvent(error, requestId));
    requestLog.endAs(error.status, this.deps.report);
  }

  private refuseWaitingAndClose(): void {
    for (const _ of this.waiting) this.refuseMessage(createShutdownError());
    this.waiting.length = 0;
    this.waitingBytes = 0;
    this.close(1001, "server shutting down");
  }

  private sendEvent(event: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(event);
  }

  private ping(): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (performance.now() - this.lastHeardAt > this.deps.clientReadTimeoutMs) {
      this.deps.logger.warn("websocket client answered no ping; disconnected");
      this.socket.terminate();
      return;
    }
    this.socket.ping();
  }

  private armIdleDeadline(): void {
    clearTimeout(this.idleTimer);
    if (this.turnRunning || this.waiting.length > 0 || this.isClosed) return;
    this.idleTimer = setTimeout(() => this.close(1000, "idle timeout"), this.deps.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private close(code: number, reason: string): void {
    if (this.isClosed) return;
    const state = this.socket.readyState;
    if (state === this.socket.OPEN || state === this.socket.CONNECTING) this.socket.close(code, reason);
  }

  private onClose(): void {
    this.isClosed = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.idleTimer);
    this.waiting.length = 0;
    this.waitingBytes = 0;
    this.kept = undefined;
    // The client left: the turn in progress stops its upstream and settles as cancelled.
    this.turnAbort?.abort(new Error("Client closed the WebSocket"));
    this.resolveClosed();
  }
}

function createShutdownError(): GatewayError {
  return new GatewayError(
    "rate_limit_exceeded",
    "This gateway instance is shutting down and takes no new requests; reconnect (another instance will answer)",
    { retryAfterSeconds: 1 },
  );
}
