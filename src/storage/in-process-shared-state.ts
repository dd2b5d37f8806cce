/** Embedded mode's SharedState: one process, so pub/sub is an EventEmitter. */
import { EventEmitter } from "node:events";
import type { SharedState } from "./types.js";

export function createInProcessSharedState(): SharedState {
  const emitter = new EventEmitter();
  // Every cache in the process may subscribe to the same channel; there is no leak to warn about.
  emitter.setMaxListeners(0);
  let closed = false;

  return {
    mode: "in-process",
    async ping() {
      if (closed) throw new Error("Shared state is closed");
    },
    async publish(channel, message) {
      if (closed) throw new Error("Shared state is closed");
      // Delivered on a later tick, like Redis: a publisher never runs subscribers inside its own call.
      setImmediate(() => emitter.emit(channel, message));
    },
    async subscribe(channel, onMessage) {
      if (closed) throw new Error("Shared state is closed");
      const listener = (message: string) => {
        try {
          onMessage(message);
        } catch {
          // A failing subscriber must not stop delivery to the others.
        }
      };
      emitter.on(channel, listener);
      return async () => {
        emitter.off(channel, listener);
      };
    },
    async close() {
      closed = true;
      emitter.removeAllListeners();
    },
  };
}
