/**
 * An AbortSignal that fires when the client leaves before its response was fully written: one
 * listener on the Node response is all the engine needs to cancel the upstream call, with no web
 * Request built.
 *
 * The same signal ends a request the instance itself gives up on (the shutdown's drain deadline,
 * `abortExchange`): its reason is then a GatewayError, which the handler answers with (in the
 * endpoint's format) instead of treating the client as gone.
 */
import type { ServerResponse } from "node:http";
import type { GatewayError } from "../../errors/gateway-error.js";

const CONTROLLER = Symbol("client-gone controller");
type WithController = ServerResponse & { [CONTROLLER]?: AbortController };

export function createClientGoneSignal(outgoing: ServerResponse): AbortSignal {
  const controller = new AbortController();
  (outgoing as WithController)[CONTROLLER] = controller;
  // 'close' also follows a completed response; only an unfinished one means the client left.
  const onClose = () => {
    if (!outgoing.writableFinished) controller.abort(new Error("Client connection prematurely closed."));
  };
  if (outgoing.destroyed) onClose();
  else outgoing.once("close", onClose);
  return controller.signal;
}

/**
 * Ends the request answering on `outgoing` with `reason` (the upstream is stopped, the record
 * settled, the client told in its format); false when no signal was made for it (not a
 * generation request), which the caller then ends by closing its connection.
 */
export function abortExchange(outgoing: ServerResponse, reason: GatewayError): boolean {
  const controller = (outgoing as WithController)[CONTROLLER];
  if (!controller) return false;
  controller.abort(reason);
  return true;
}
