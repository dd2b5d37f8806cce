/**
 * The outbox when the gateway has no data folder (`memory://`, tests): same contract, same replay,
 * but parked outcomes live only as long as the process. Deployments always have a folder.
 */
import type { ClaimedBatch, OutcomeOutbox, ParkedOutcome } from "./outcome-outbox.js";

export interface MemoryOutcomeOutbox extends OutcomeOutbox {
  /** Entries set aside so far (tests inspect them). */
  readonly setAsideEntries: Array<{ entry: ParkedOutcome | string; reason: string }>;
}

export function createMemoryOutcomeOutbox(): MemoryOutcomeOutbox {
  let pending: ParkedOutcome[] = [];
  const claimed = new Set<ClaimedBatch>();
  const setAsideEntries: MemoryOutcomeOutbox["setAsideEntries"] = [];
  let sequence = 0;

  return {
    durable: false,
    setAsideEntries,
    async park(entry) {
      pending.push(entry);
    },
    async claim() {
      if (pending.length > 0) {
        const entries = pending;
        pending = [];
        const batch: ClaimedBatch = {
          name: `memory-${++sequence}`,
          entries,
          unreadable: [],
          complete: async () => {
            claimed.delete(batch);
          },
        };
        claimed.add(batch);
      }
      return [...claimed];
    },
    async setAside(entry, reason) {
      setAsideEntries.push({ entry, reason });
    },
    async close() {},
  };
}
