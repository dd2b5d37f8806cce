/**
 * Turns a running GenerationStream into an SSE response: frames from the format's encoder, a
 * keep-alive every 15 s (spec §6), settlement after the last part, and upstream cancellation when
 * the client disconnects.
 */
import type { GenerationStream } from "../engine/generation-stream.js";
import { createGatewayErrorFromInfo, GatewayError } from "../errors/gateway-error.js";
import type { StreamEncoder } from "../ingress/ingress-format.js";
import type { Logger } from "../logging/logger.js";

export const KEEP_ALIVE_INTERVAL_MS = 15_000;

const encoder = new TextEncoder();

export function createSseResponse(
  stream: GenerationStream,
  format: StreamEncoder,
  options: { requestId: string; logger: Logger; keepAliveMs?: number; signal: AbortSignal },
): Response {
  let keepAlive: NodeJS.Timeout | undefined;
  let closed = false;

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!closed && text.length > 0) controller.enqueue(encoder.encode(text));
      };
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(keepAlive);
        controller.close();
      };
      keepAlive = setInterval(() => write(format.keepAlive()), options.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS);
      // Started before the upstream's first part: show the client the stream is alive right away.
      if (stream.startedBeforeFirstPart) write(format.keepAlive());
      const onClientGone = () => {
        clearInterval(keepAlive);
        stream.cancel();
      };
      options.signal.addEventListener("abort", onClientGone, { once: true });

      void (async () => {
        try {
          for await (const part of stream.parts()) {
            if (part.type === "error") {
              const settlement = stream.settle();
              write(format.fail(createGatewayErrorFromInfo(part.error)));
              await settlement;
              return;
            }
            write(format.push(part));
          }
          const settlement = await stream.settle();
          write(format.finish(settlement));
        } catch (error) {
          // A bug, not an upstream failure (those arrive as `error` parts): still end the stream
          // with the format's error frame so the client does not wait for a terminator.
          options.logger.error({ err: error, requestId: options.requestId }, "stream failed");
          write(format.fail(new GatewayError("internal_error", "Internal error")));
          await stream.settle().catch(() => {});
        } finally {
          options.signal.removeEventListener("abort", onClientGone);
          try {
            close();
          } catch {
            // The client already cancelled the body.
          }
        }
      })();
    },
    cancel() {
      closed = true;
      clearInterval(keepAlive);
      stream.cancel();
    },
  });

  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      "X-Request-Id": options.requestId,
    },
  });
}
