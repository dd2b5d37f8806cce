/**
 * Settlements that could not reach the limit store (Redis hiccup) are retried here instead of lost.
 * A settlement retried after its lease expired finds no lease and marks the counters stale, which
 * re-seeds them from Postgres; so giving up after the lease's lifetime loses nothing either, it
 * only stops the queue from growing while Redis is gone.
 */
import type { SettleInput } from "./limit-counters.js";

export interface SettleRetryQueueOptions {
  settle(input: SettleInput): Promise<unknown>;
  /** Entries older than this are dropped (their leases have expired by then). */
  maxAgeMs: number;
  retryIntervalMs?: number;
  maxEntries?: number;
  onGiveUp?: (input: SettleInput, reason: string) => void;
}

export interface SettleRetryQueue {
  add(input: SettleInput): void;
  readonly size: number;
  /** One pass now; resolves when it is over. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_RETRY_INTERVAL_MS = 1_000;
const DEFAULT_MAX_ENTRIES = 10_000;

export function createSettleRetryQueue(options: SettleRetryQueueOptions): SettleRetryQueue {
  const entries: Array<{ input: SettleInput; addedAt: number }> = [];
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const giveUp = options.onGiveUp ?? (() => {});
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  function schedule(): void {
    if (closed || timer || entries.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS);
    // Retries must not keep a finished process alive.
    timer.unref();
  }

  async function pass(): Promise<void> {
    const now = Date.now();
    while (entries.length > 0) {
      const entry = entries[0];
      if (now - entry.addedAt > options.maxAgeMs) {
        entries.shift();
        giveUp(entry.input, "older than its lease");
        continue;
      }
      try {
        await options.settle(entry.input);
        entries.shift();
      } catch {
        break; // Still unreachable: keep the order, try again later.
      }
    }
  }

  function flush(): Promise<void> {
    running ??= pass().finally(() => {
      running = undefined;
      schedule();
    });
    return running;
  }

  return {
    add(input) {
      if (closed) return giveUp(input, "shutting down");
      if (entries.length >= maxEntries) giveUp(entries.shift()!.input, "retry queue full");
      entries.push({ input, addedAt: Date.now() });
      schedule();
    },
    get size() {
      return entries.length;
    },
    flush,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await flush();
      closed = true;
      clearTimeout(timer);
      for (const entry of entries.splice(0)) giveUp(entry.input, "shutting down");
    },
  };
}
