/**
 * Writes one streamed turn to a Responses WebSocket: the same events as the SSE stream of
 * `POST /api/v1/responses` (the same encoder), one JSON event per text message, ending with
 * `response.completed` or `response.incomplete` (or the stream's `error` and `response.failed`).
 * The SSE writer's rules hold (sse-response.ts): the run settles itself, the final event waits for
 * the settlement, a client that leaves cancels the upstream, and the next part is pulled only once
 * the socket has taken the last ones, so a slow reader slows the upstream instead of growing a
 * queue; one that takes nothing for `clientReadTimeoutMs` while output waits is disconnected.
 */
import type { WebSocket } from "ws";
import { GatewayError, readStreamError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../../ingress/ingress-format.js";
import type { Logger } from "../../logging/logger.js";
import type { StreamedRun } from "../generation/sse-response.js";
import { RESPONSE_HIGH_WATER_BYTES } from "../router/response-high-water.js";
import { splitSseEvents } from "./split-sse-events.js";

/** Output queued on the socket beyond this waits for the client before the next part is pulled. */
const HIGH_WATER_BYTES = RESPONSE_HIGH_WATER_BYTES;

export interface SocketTurnOptions {
  requestId: string;
  logger: Logger;
  /** Fires when the client leaves; a GatewayError reason: the instance ends the turn. */
  signal: AbortSignal;
  clientReadTimeoutMs: number;
  /** Adds the turn's lane (`stream_id`) to each event, when it has one. */
  decorate: (event: string) => string;
}

/** How a turn ended: the final response's event, when it completed or was cut short (incomplete). */
export interface SocketTurnEnd {
  /** The `response.completed` / `response.incomplete` event as sent; undefined: it failed. */
  finalEvent: string | undefined;
}

export async function writeSocketTurn(
  socket: WebSocket,
  run: StreamedRun,
  encoder: StreamEncoder,
  options: SocketTurnOptions,
): Promise<SocketTurnEnd> {
  const { signal } = options;
  /** Set when the instance ends the turn (shutdown): the client is still there and is told why. */
  let endedBy: GatewayError | undefined;
  let wakeWriter: (() => void) | undefined;
  const onAbort = () => {
    if (signal.reason instanceof GatewayError) endedBy = signal.reason;
    run.cancel();
    wakeWriter?.();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });

  /** Sends the frames' events; resolves once the socket took them when output is piling up. */
  const send = async (frames: string): Promise<string | undefined> => {
    const events = splitSseEvents(frames);
    if (events.length === 0 || socket.readyState !== socket.OPEN) return events.at(-1);
    for (let index = 0; index < events.length - 1; index++) socket.send(options.decorate(events[index]!));
    const last = options.decorate(events[events.length - 1]!);
    if (socket.bufferedAmount + last.length < HIGH_WATER_BYTES) {
      socket.send(last);
      return events.at(-1);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        options.logger.warn(
          { requestId: options.requestId },
          "client stopped reading the socket; disconnected",
        );
        socket.terminate();
      }, options.clientReadTimeoutMs);
      timer.unref();
      const written = () => {
        clearTimeout(timer);
        wakeWriter = undefined;
        resolve();
      };
      // Called once the message is written to the connection (or the connection is gone).
      wakeWriter = written;
      socket.send(last, written);
    });
    return events.at(-1);
  };

  const fail = async (error: GatewayError): Promise<SocketTurnEnd> => {
    const settlement = await run.settle().catch(() => undefined);
    await send(encoder.fail(error, settlement));
    return { finalEvent: undefined };
  };

  try {
    for await (const part of run.parts()) {
      if (part.type === "error") return await fail(readStreamError(part.error));
      await send(encoder.push(part));
    }
    if (endedBy !== undefined) {
      const settlement = run.settle();
      await send(encoder.fail(endedBy));
      await settlement;
      return { finalEvent: undefined };
    }
    const settlement = await run.settle();
    return { finalEvent: await send(encoder.finish(settlement)) };
  } catch (error) {
    // A bug, not an upstream failure (those arrive as `error` parts): the client still gets the
    // format's error events instead of waiting for a terminal event.
    options.logger.error({ err: error, requestId: options.requestId }, "socket turn failed");
    return await fail(new GatewayError("internal_error", "Internal error"));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
