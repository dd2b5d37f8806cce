/**
 * Usage records through group commits (docs/decisions/0035-settlement-group-commit.md): concurrent `start`s share one
 * multi-row INSERT and concurrent `finish`es one statement that finalises every row, writes their
 * ledger lines and debits each workspace once. A caller still waits until its own record is
 * committed, so everything the un-batched repository promised holds; only the number of round
 * trips and transactions per request drops.
 */

import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import type { FinishEntry, SqlGenerationRepository } from "./generation-repository.js";
import { createGroupCommit } from "./group-commit.js";
import { toFinalRecord, toInProgressRecord } from "./in-progress-record.js";

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

export function createBatchedGenerationRepository(sql: SqlGenerationRepository): BatchedGenerationRepository {
  const starts = createGroupCommit<GenerationStart>({ write: sql.startMany, maxBatch: MAX_BATCH });
  const finishes = createGroupCommit<FinishEntry & { start: GenerationStart }>({
    maxBatch: MAX_BATCH,
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
    finishedBefore: () => lastFinish,
    async drain() {
      await Promise.all([starts.drain(), finishes.drain()]);
    },
  };
}
