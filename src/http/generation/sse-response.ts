/**
 * Writes a streamed GenerationRun as an SSE response: frames from the format's encoder, a
 * keep-alive every 15 s, the final frames once the run has settled, and upstream cancellation when
 * the client disconnects. The run settles itself (when its parts end, however they end, or when
 * the client leaves); the writer only waits for that settlement to write the final frames.
 *
 * Frames go straight to the Node response as strings (no web ReadableStream, no TextEncoder per
 * frame), and the next part is pulled only once the socket has taken the last one ('drain'), so a
 * slow reader slows the upstream instead of growing a queue in memory: a connection holds at most
 * the response's high-water mark and one batch of frames (response-high-water.ts). A client that takes nothing
 * for `clientReadTimeoutMs` while output waits for it is disconnected (client-read-watch.ts), which
 * cancels the stream like any other disconnect.
 */
import type { ServerResponse } from "node:http";
import type { GenerationRun } from "../../engine/generation-run.js";
import type { ClientSignal } from "../../engine/ports.js";
import { GatewayError, readStreamError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../../ingress/ingress-format.js";
import type { Logger } from "../../logging/logger.js";
import { DEFAULT_CLIENT_READ_TIMEOUT_MS, watchClientReads } from "../router/client-read-watch.js";
import { RESPONSE_HIGH_WATER_BYTES } from "../router/response-high-water.js";

export const KEEP_ALIVE_INTERVAL_MS = 15_000;

/** What the writer uses of a streamed run: its parts, its settlement, and a way to cancel it. */
export type StreamedRun = Pick<GenerationRun, "parts" | "settle" | "cancel" | "startedBeforeFirstPart">;

export interface SseOptions {
  requestId: string;
  logger: Logger;
  keepAliveMs?: number;
  /** A client that takes no bytes for this long while output waits for it is disconnected. */
  clientReadTimeoutMs?: number;
  /** Fires when the client leaves before the response ended (see client-gone-signal.ts). */
  signal: ClientSignal;
  /** More response headers (`X-Hi-Dropped`). */
  headers?: Readonly<Record<string, string>>;
}

export function writeSseResponse(
  outgoing: ServerResponse,
  stream: StreamedRun,
  format: StreamEncoder,
  options: SseOptions,
): void {
  let closed = false;
  let wroteFrame = false;
  let resumeWriter: (() => void) | undefined;

  outgoing.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    "X-Request-Id": options.requestId,
    ...options.headers,
  });
  // Frames made in one turn of the event loop (one upstream chunk's parts) leave as one write at
  // the end of the turn: one chunk of the chunked encoding and one socket write, instead of a
  // chunk (size line, frame, line end) per frame.
  let pending = "";
  let flushQueued = false;
  /** The last write filled the socket buffer: the next frame waits for 'drain'. */
  let blocked = false;
  const flush = () => {
    flushQueued = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    if (!closed && !outgoing.write(text)) blocked = true;
  };
  /** false: the socket buffer is full, wait for `drained()` before writing more. */
  const write = (text: string): boolean => {
    if (closed || text.length === 0) return true;
    wroteFrame = true;
    pending += text;
    // Past the high-water mark, out now: a batch of parts never queues more than that in memory
    // before the socket has said whether it takes more.
    if (pending.length >= RESPONSE_HIGH_WATER_BYTES) flush();
    else if (!flushQueued) {
      flushQueued = true;
      process.nextTick(flush);
    }
    return !blocked;
  };
  const reads = watchClientReads(
    outgoing,
    options.clientReadTimeoutMs ?? DEFAULT_CLIENT_READ_TIMEOUT_MS,
    () =>
      options.logger.warn(
        { requestId: options.requestId },
        "client stopped reading the stream; disconnected",
      ),
  );
  const drained = () =>
    new Promise<void>((resolve) => {
      resumeWriter = resolve;
      reads.expect();
    });
  const onDrain = () => {
    blocked = false;
    const resume = resumeWriter;
    resumeWriter = undefined;
    resume?.();
  };
  outgoing.on("drain", onDrain);

  const keepAlive = setInterval(
    () => write(format.keepAlive()),
    options.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS,
  );
  // Started before the upstream's first part: show the client the stream is alive right away.
  if (stream.startedBeforeFirstPart) write(format.keepAlive());
  // The headers go out with the first frame; if none is ready within this tick, send them alone
  // so the client sees the response start (as a flushed web stream response did).
  process.nextTick(() => {
    if (!wroteFrame && !closed) outgoing.flushHeaders();
  });

  /** Set when the instance ends the stream (shutdown): the client is still there and is told why. */
  let endedBy: GatewayError | undefined;
  const onClientGone = () => {
    if (options.signal.reason instanceof GatewayError) {
      endedBy = options.signal.reason;
      clearInterval(keepAlive);
      stream.cancel();
      onDrain();
      return;
    }
    closed = true;
    clearInterval(keepAlive);
    stream.cancel();
    onDrain();
  };
  if (options.signal.aborted) onClientGone();
  else options.signal.addEventListener("abort", onClientGone, { once: true });

  /** The format's error frames, after the usage the failed stream is billed (where the format has room). */
  const endWithError = async (error: GatewayError) => {
    const settlement = await stream.settle().catch(() => undefined);
    write(format.fail(error, settlement));
  };

  void (async () => {
    try {
      for await (const part of stream.parts()) {
        if (part.type === "error") {
          await endWithError(readStreamError(part.error));
          return;
        }
        if (!write(format.push(part))) {
          flush();
          await drained();
        }
      }
      if (endedBy) {
        const settlement = stream.settle();
        write(format.fail(endedBy));
        await settlement;
        return;
      }
      const settlement = await stream.settle();
      write(format.finish(settlement));
    } catch (error) {
      // A bug, not an upstream failure (those arrive as `error` parts): still end the stream
      // with the format's error frame so the client does not wait for a terminator.
      options.logger.error({ err: error, requestId: options.requestId }, "stream failed");
      await endWithError(new GatewayError("internal_error", "Internal error"));
    } finally {
      options.signal.removeEventListener("abort", onClientGone);
      outgoing.off("drain", onDrain);
      reads.stopWatchingDrains();
      clearInterval(keepAlive);
      if (!closed) {
        // The last frames and the chunked terminator leave in one socket write.
        const last = pending;
        pending = "";
        closed = true;
        if (last === "") outgoing.end();
        else outgoing.end(last);
        // The tail may still wait for a client that stopped reading: it gets the same deadline.
        if (!outgoing.writableFinished) reads.expect();
      }
    }
  })();
}
