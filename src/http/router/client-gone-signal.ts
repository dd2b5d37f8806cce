/**
 * A signal that fires when the client leaves before its response was fully written: one listener
 * on the Node response is all the engine needs to cancel the upstream call, with no web Request
 * built. Not an AbortSignal: an AbortController per request (with its EventTarget) cost more than
 * the two listeners a request ever adds (the run's, and a stream writer's); the engine takes any
 * `ClientSignal`, an AbortSignal included.
 *
 * The same signal ends a request the instance itself gives up on (the shutdown's drain deadline,
 * `abortExchange`): its reason is then a GatewayError, which the handler answers with (in the
 * endpoint's format) instead of treating the client as gone.
 */
import type { ServerResponse } from "node:http";
import type { ClientSignal } from "../../engine/ports.js";
import type { GatewayError } from "../../errors/gateway-error.js";

export class ClientGoneSignal implements ClientSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  /** Listeners run once, when the signal fires (`once` is what every caller asks for). */
  addEventListener(_type: "abort", listener: () => void): void {
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener();
      } catch (error) {
        // As an EventTarget does: one listener's throw reaches the process, the others still run.
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

const SIGNAL = Symbol("client-gone signal");
type WithSignal = ServerResponse & { [SIGNAL]?: ClientGoneSignal };

export function createClientGoneSignal(outgoing: ServerResponse): ClientGoneSignal {
  const signal = new ClientGoneSignal();
  (outgoing as WithSignal)[SIGNAL] = signal;
  // 'close' also follows a completed response; only an unfinished one means the client left.
  const onClose = () => {
    if (!outgoing.writableFinished) signal.abort(new Error("Client connection prematurely closed."));
  };
  if (outgoing.destroyed) onClose();
  else outgoing.once("close", onClose);
  return signal;
}

/**
 * Ends the request answering on `outgoing` with `reason` (the upstream is stopped, the record
 * settled, the client told in its format); false when no signal was made for it (not a
 * generation request), which the caller then ends by closing its connection.
 */
export function abortExchange(outgoing: ServerResponse, reason: GatewayError): boolean {
  const signal = (outgoing as WithSignal)[SIGNAL];
  if (!signal) return false;
  signal.abort(reason);
  return true;
}
