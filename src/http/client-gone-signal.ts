/**
 * An AbortSignal that fires when the client leaves before its response was fully written. The
 * web Request's own `signal` would do the same, but asking for it makes @hono/node-server build
 * the full web Request; one listener on the Node response is all the engine needs to cancel the
 * upstream call.
 */
import type { ServerResponse } from "node:http";

export function createClientGoneSignal(outgoing: ServerResponse): AbortSignal {
  const controller = new AbortController();
  // 'close' also follows a completed response; only an unfinished one means the client left.
  const onClose = () => {
    if (!outgoing.writableFinished) controller.abort(new Error("Client connection prematurely closed."));
  };
  if (outgoing.destroyed) onClose();
  else outgoing.once("close", onClose);
  return controller.signal;
}
