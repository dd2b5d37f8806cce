/**
 * Writes a complete answer body (after its head) at the client's pace: a slice at a time, the
 * next one only once the socket has taken the last one, so a client that does not read holds its
 * answer once (the body's bytes) and never a second copy queued behind the socket. A client that
 * takes nothing for `readTimeoutMs` while the answer waits for it is disconnected
 * (client-read-watch.ts), which frees the answer; without that, a connection whose client never
 * reads would hold its answer and its place among the busy connections for as long as it stayed.
 */
import type { ServerResponse } from "node:http";
import { DEFAULT_CLIENT_READ_TIMEOUT_MS, watchClientReads } from "./client-read-watch.js";
import { RESPONSE_HIGH_WATER_BYTES } from "./response-high-water.js";

/** `byteLength`: the body's size in bytes (its Content-Length), known to the caller. */
export function writeBody(
  outgoing: ServerResponse,
  content: string | Buffer,
  byteLength: number,
  readTimeoutMs: number = DEFAULT_CLIENT_READ_TIMEOUT_MS,
): void {
  // Most answers: one write, which the socket takes at once.
  if (byteLength <= RESPONSE_HIGH_WATER_BYTES) {
    outgoing.end(content);
    if (!outgoing.writableFinished) watchClientReads(outgoing, readTimeoutMs, noop).expect();
    return;
  }
  const body = typeof content === "string" ? Buffer.from(content) : content;
  const reads = watchClientReads(outgoing, readTimeoutMs, noop);
  let offset = 0;
  const pump = () => {
    while (!outgoing.destroyed) {
      const end = Math.min(offset + RESPONSE_HIGH_WATER_BYTES, body.byteLength);
      // Views of the body, not copies.
      const slice = body.subarray(offset, end);
      offset = end;
      if (offset === body.byteLength) {
        reads.stopWatchingDrains();
        outgoing.end(slice);
        if (!outgoing.writableFinished) reads.expect();
        return;
      }
      if (!outgoing.write(slice)) {
        outgoing.once("drain", pump);
        reads.expect();
        return;
      }
    }
  };
  pump();
}

function noop(): void {}
