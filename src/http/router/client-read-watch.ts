/**
 * Drops a streaming client that stopped reading. The SSE writer stops pulling upstream parts while
 * the socket buffer is full, so such a client costs little memory, but it would hold its upstream
 * request, its reservation and its socket for as long as the upstream keeps the stream open.
 * `expect()` marks that output is waiting for the client (a write found the buffer full, or the
 * response's tail is not flushed yet); unless the socket drains or the response finishes within
 * `timeoutMs`, the socket is destroyed. Its 'close' then cancels the generation like any other
 * disconnect (client-gone-signal.ts): the upstream request is aborted and the record settled.
 */
import type { ServerResponse } from "node:http";

/** `limits.client_read_timeout_seconds` when the caller gives none. */
export const DEFAULT_CLIENT_READ_TIMEOUT_MS = 60_000;

export interface ClientReadWatch {
  /** Output waits for the client: start the deadline unless it is running. */
  expect(): void;
  /** The writer is done writing: only the response's end (its 'finish') stops a deadline now. */
  stopWatchingDrains(): void;
}

export function watchClientReads(
  outgoing: ServerResponse,
  timeoutMs: number,
  onTimeout: () => void,
): ClientReadWatch {
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  outgoing.on("drain", clear);
  outgoing.once("finish", clear);
  outgoing.once("close", clear);
  return {
    stopWatchingDrains() {
      outgoing.off("drain", clear);
    },
    expect() {
      if (timer !== undefined || outgoing.destroyed) return;
      timer = setTimeout(() => {
        timer = undefined;
        onTimeout();
        outgoing.destroy();
      }, timeoutMs);
      timer.unref();
    },
  };
}
