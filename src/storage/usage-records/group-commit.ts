/**
 * Usage records through group commits (docs/decisions/0035-settlement-group-commit.md): the
 * PostgreSQL recorder's writer, and embedded mode's without a data folder. Items submitted while a
 * write is in flight are written together by the next one, so under load one statement (one round
 * trip, one WAL flush) carries many usage records. A lone item is written at the end of its
 * event-loop turn, or, with `lingerMs`, after waiting that long for others (distributed mode, where
 * the record's Redis copy already answers every instance's lookups: at moderate rates each request
 * otherwise pays a statement, a round trip and a settlement call of its own, and a short stream's
 * in-progress row is withdrawn before it is ever written). A reader that must see the records
 * already answered (`finishedBefore`) and `drain` end the wait at once. Concurrent `start`s share one multi-row INSERT and concurrent
 * `finish`es one statement that finalises every row, writes their ledger lines and debits each
 * workspace once. A caller still waits until its own record is committed; only the number of
 * round trips and transactions per request drops.
 *
 * The failure rule of every usage writer (here and embedded-recorder.ts, `writeAllOrEach`): many
 * records go in one statement, all or none; when that fails, each is written on its own, so one
 * bad record (say, of a deleted workspace) fails alone instead of taking its batch with it.
 */

import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import type { FinishEntry, SqlGenerationRepository } from "./generation-repository.js";
import { toFinalRecord, toInProgressRecord } from "./record-views.js";

/** Bounds one statement's parameters (21 arrays of this many elements). */
const MAX_BATCH = 200;

export interface BatchedGenerationRepository extends GenerationRepository {
  /** Waits for every write already submitted. */
  drain(): Promise<void>;
  /**
   * Waits for the final records submitted before the call (written or failed), not for those
   * submitted meanwhile: a read made after a request's answer sees its record, and reads under
   * a steady flow of records never starve.
   */
  finishedBefore(): Promise<void>;
}

export interface BatchedGenerationOptions {
  /** How long a lone record waits for others before its write (default 0: the turn's end). */
  lingerMs?: number;
}

export function createBatchedGenerationRepository(
  sql: SqlGenerationRepository,
  { lingerMs = 0 }: BatchedGenerationOptions = {},
): BatchedGenerationRepository {
  const starts = createGroupCommit<GenerationStart>({ write: sql.startMany, maxBatch: MAX_BATCH, lingerMs });
  const finishes = createGroupCommit<FinishEntry & { start: GenerationStart }>({
    maxBatch: MAX_BATCH,
    lingerMs,
    write(entries) {
      // An upsert may touch a row once per statement; a repeated finish is a no-op anyway.
      const seen = new Set<string>();
      const distinct = entries.filter((entry) => !seen.has(entry.id) && seen.add(entry.id));
      return sql.finishMany(distinct);
    },
  });

  // Starts submitted and not yet committed: this instance already answers lookups for them, so a
  // caller that got the id can find its record before the row is written (see engine: embedded
  // mode, one instance per data folder, does not wait for the row before a stream's headers).
  const pendingStarts = new Map<string, { start: GenerationStart; submittedAt: Date }>();
  /** The last final record submitted: group commits write in order, so it lands last. */
  let lastFinish: Promise<void> = Promise.resolve();
  const unwrittenFinishes = new Map<
    string,
    { start: GenerationStart; submittedAt: Date; outcome: GenerationOutcome }
  >();

  return {
    start(record) {
      pendingStarts.set(record.id, { start: record, submittedAt: new Date() });
      return starts.submit(record).finally(() => pendingStarts.delete(record.id));
    },
    finish(id, outcome, start) {
      if (start === undefined) return sql.finish(id, outcome);
      // A short stream can finish before its in-progress row was written: the final row written
      // by this finish makes that row pointless, so it is not written at all.
      starts.withdraw((queued) => queued.id === id);
      // Until it is committed, this instance's lookups see the record final from memory.
      const entry = { start, submittedAt: new Date(), outcome };
      unwrittenFinishes.set(id, entry);
      const written = finishes.submit({ id, outcome, start }).finally(() => {
        if (unwrittenFinishes.get(id) === entry) unwrittenFinishes.delete(id);
      });
      lastFinish = written.catch(() => {});
      return written;
    },
    async get(id, workspaceId) {
      // Read before the database: a start committing in between must not be missed by both.
      const final = unwrittenFinishes.get(id);
      const pending = final ?? pendingStarts.get(id);
      const stored = await sql.get(id, workspaceId);
      if (
        (stored && stored.status !== "in_progress") ||
        !pending ||
        pending.start.workspaceId !== workspaceId
      ) {
        return stored;
      }
      if (final !== undefined) return toFinalRecord(final.start, final.outcome, final.submittedAt);
      return stored ?? toInProgressRecord(pending.start, pending.submittedAt);
    },
    listInProgress: (admittedBefore, limit) => sql.listInProgress(admittedBefore, limit),
    finishedBefore() {
      finishes.hurry();
      return lastFinish;
    },
    async drain() {
      await Promise.all([starts.drain(), finishes.drain()]);
    },
  };
}

export interface GroupCommitOptions<T> {
  /** Writes all items in one transaction: all or none. */
  write(items: readonly T[]): Promise<void>;
  /** At most this many items per write (bounds statement size). */
  maxBatch: number;
  /**
   * How long the first item after a quiet moment waits for others before the write (default 0:
   * only the rest of its event-loop turn). Items that queue while a write is in flight never wait.
   */
  lingerMs?: number;
}

export interface GroupCommit<T> {
  /** Resolves when the write that carried `item` committed; rejects with that write's error. */
  submit(item: T): Promise<void>;
  /**
   * Takes back queued items the predicate matches, before any write carried them; their submits
   * resolve as if written. Items of a write in flight are not touched. Returns how many were taken.
   */
  withdraw(matches: (item: T) => boolean): number;
  /** Ends a linger in progress: what is queued is written now. */
  hurry(): void;
  /** Waits for every submitted item to be written or failed (ending a linger). */
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
  /** Ends the current linger, while there is one. */
  let endLinger: (() => void) | undefined;
  /** What is queued is to be written without a linger (a reader waits for it). */
  let hurried = false;
  const lingerMs = options.lingerMs ?? 0;

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
      if (lingerMs > 0 && queue.length > 0 && !hurried) await linger();
      while (queue.length > 0) {
        // A hurry is for what was queued when it came: this batch takes it.
        hurried = false;
        const batch = queue.length <= options.maxBatch ? queue : queue.slice(0, options.maxBatch);
        queue = batch === queue ? [] : queue.slice(options.maxBatch);
        await writeBatch(batch);
      }
    })().finally(() => {
      running = undefined;
      if (queue.length > 0) run();
    });
  }

  function hurry(): void {
    if (queue.length === 0) return;
    hurried = true;
    endLinger?.();
  }

  function linger(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        endLinger = undefined;
        resolve();
      }, lingerMs);
      endLinger = () => {
        endLinger = undefined;
        clearTimeout(timer);
        resolve();
      };
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
    hurry,
    async drain() {
      hurry();
      while (running) {
        await running;
        hurry();
      }
    },
  };
}

/**
 * Writes `chunk` all or none, else item by item; `done` and `failed` are told about each record
 * (what `failed` throws propagates).
 */
export async function writeAllOrEach<T>(
  chunk: readonly T[],
  write: (items: readonly T[]) => Promise<void>,
  done: (item: T) => void,
  failed: (item: T, error: unknown) => void,
): Promise<void> {
  try {
    await write(chunk);
  } catch (error) {
    if (chunk.length === 1) return failed(chunk[0], error);
    for (const item of chunk) {
      try {
        await write([item]);
      } catch (itemError) {
        failed(item, itemError);
        continue;
      }
      done(item);
    }
    return;
  }
  for (const item of chunk) done(item);
}
