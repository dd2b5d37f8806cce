/**
 * Group commit: items submitted while a write is in flight are written together by the next one,
 * so under load one statement (one round trip, one WAL flush) carries many usage records, while a
 * lone item is written at once — no timer, no added latency when idle.
 *
 * Each `submit` resolves when the write that carried its item committed, and rejects with that
 * write's error. A failed write of several items is retried item by item, so one bad item (a
 * permanent error such as a missing workspace) fails alone instead of taking its batch with it.
 */
import { writeAllOrEach } from "./write-all-or-each.js";

export interface GroupCommitOptions<T> {
  /** Writes all items in one transaction: all or none. */
  write(items: readonly T[]): Promise<void>;
  /** At most this many items per write (bounds statement size). */
  maxBatch: number;
}

export interface GroupCommit<T> {
  submit(item: T): Promise<void>;
  /**
   * Takes back queued items the predicate matches, before any write carried them; their submits
   * resolve as if written. Items of a write in flight are not touched. Returns how many were taken.
   */
  withdraw(matches: (item: T) => boolean): number;
  /** Waits for every submitted item to be written or failed. */
  drain(): Promise<void>;
}

interface Pending<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

export function createGroupCommit<T>(options: GroupCommitOptions<T>): GroupCommit<T> {
  let queue: Pending<T>[] = [];
  let running: Promise<void> | undefined;

  function writeBatch(batch: Pending<T>[]): Promise<void> {
    return writeAllOrEach(
      batch,
      (pendings) => options.write(pendings.map((pending) => pending.item)),
      (pending) => pending.resolve(),
      (pending, error) => pending.reject(error),
    );
  }

  function run(): void {
    if (running) return;
    running = (async () => {
      // Let the rest of this event-loop turn submit too: requests finishing together share a write.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (queue.length > 0) {
        const batch = queue.length <= options.maxBatch ? queue : queue.slice(0, options.maxBatch);
        queue = batch === queue ? [] : queue.slice(options.maxBatch);
        await writeBatch(batch);
      }
    })().finally(() => {
      running = undefined;
      if (queue.length > 0) run();
    });
  }

  return {
    submit(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        run();
      });
    },
    withdraw(matches) {
      const kept: Pending<T>[] = [];
      let taken = 0;
      for (const pending of queue) {
        if (matches(pending.item)) {
          taken++;
          pending.resolve();
        } else kept.push(pending);
      }
      queue = kept;
      return taken;
    },
    async drain() {
      while (running) await running;
    },
  };
}
