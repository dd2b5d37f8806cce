/**
 * Writes a complete answer body (after its head) at the client's pace: a slice at a time, the
 * next one only once the socket has taken the last one, so a client that does not read holds its
 * answer once (the body's bytes) and never a second copy queued behind the socket. A client that
 * takes nothing for `readTimeoutMs` while the answer waits for it is disconnected
 * (client-read-watch.ts), which frees the answer; without that, a connection whose client never
 * reads would hold its answer and its place among the busy connections for as long as it stayed.
 * The answers waiting for their clients share one budget for the process (held-answers.ts).
 */
import type { ServerResponse } from "node:http";
import { DEFAULT_CLIENT_READ_TIMEOUT_MS, watchClientReads } from "./client-read-watch.js";
import { holdAnswer } from "./held-answers.js";
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
  // Counted against the process's budget of waiting answers from its first wait until it is
  // written or its connection closes (held-answers.ts).
  let release: (() => void) | undefined;
  const holdUntilDone = () => {
    if (release !== undefined) return;
    release = holdAnswer(body.byteLength, () => outgoing.destroy());
    outgoing.once("finish", release);
    outgoing.once("close", release);
  };
  const pump = () => {
    while (!outgoing.destroyed) {
      const end = Math.min(offset + RESPONSE_HIGH_WATER_BYTES, body.byteLength);
      // Views of the body, not copies.
      const slice = body.subarray(offset, end);
      offset = end;
      if (offset === body.byteLength) {
        reads.stopWatchingDrains();
        outgoing.end(slice);
        if (!outgoing.writableFinished) {
          reads.expect();
          holdUntilDone();
        }
        return;
      }
      if (!outgoing.write(slice)) {
        outgoing.once("drain", pump);
        reads.expect();
        holdUntilDone();
        return;
      }
    }
  };
  pump();
}

function noop(): void {}
