/**
 * A request body left unread after its answer (a bad key answered before the body was read, a
 * body refused mid-upload for its size) is read off and thrown away, so the keep-alive connection
 * can carry the next request; a body that does not end within half a second, or runs past 64 MiB,
 * closes the connection instead. The router (create-app.ts) applies it to every request with a
 * body, and the listener to the requests it refuses.
 */
import type { IncomingMessage } from "node:http";

export const DRAIN_TIMEOUT_MS = 500;
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export function drainUnreadBody(incoming: IncomingMessage): void {
  if (incoming.destroyed || incoming.readableEnded) return;
  let bytesRead = 0;
  const cleanup = () => {
    clearTimeout(timer);
    incoming.off("data", onData);
    incoming.off("end", cleanup);
    incoming.off("error", cleanup);
  };
  const dropConnection = () => {
    cleanup();
    const socket = incoming.socket;
    if (socket && !socket.destroyed) socket.destroySoon();
  };
  const onData = (chunk: Buffer) => {
    bytesRead += chunk.byteLength;
    if (bytesRead > MAX_DRAIN_BYTES) dropConnection();
  };
  const timer = setTimeout(dropConnection, DRAIN_TIMEOUT_MS);
  timer.unref();
  incoming.on("data", onData);
  incoming.on("end", cleanup);
  incoming.on("error", cleanup);
  incoming.resume();
}
