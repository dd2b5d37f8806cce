/**
 * Usage records through group commits (docs/decisions/0035-settlement-group-commit.md): concurrent `start`s share one
 * multi-row INSERT and concurrent `finish`es one statement that finalises every row, writes their
 * ledger lines and debits each workspace once. A caller still waits until its own record is
 * committed, so everything the un-batched repository promised holds; only the number of round
 * trips and transactions per request drops.
 */

import type { GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import type { FinishEntry, SqlGenerationRepository } from "./generation-repository.js";
import { createGroupCommit } from "./group-commit.js";
import { toInProgressRecord } from "./in-progress-record.js";

/** Bounds one statement's parameters (21 arrays of this many elements). */
const MAX_BATCH = 200;

export interface BatchedGenerationRepository extends GenerationRepository {
  /** Waits for every write already submitted. */
  drain(): Promise<void>;
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
  const unwrittenFinishes = new Map<string, { start: GenerationStart; submittedAt: Date }>();

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
      // Until it is committed, lookups still see the record (in progress).
      const entry = { start, submittedAt: new Date() };
      unwrittenFinishes.set(id, entry);
      return finishes.submit({ id, outcome, start }).finally(() => {
        if (unwrittenFinishes.get(id) === entry) unwrittenFinishes.delete(id);
      });
    },
    async get(id, workspaceId) {
      // Read before the database: a start committing in between must not be missed by both.
      const pending = pendingStarts.get(id) ?? unwrittenFinishes.get(id);
      const stored = await sql.get(id, workspaceId);
      if (stored || !pending || pending.start.workspaceId !== workspaceId) return stored;
      return toInProgressRecord(pending.start, pending.submittedAt);
    },
    listInProgress: (admittedBefore, limit) => sql.listInProgress(admittedBefore, limit),
    async drain() {
      await Promise.all([starts.drain(), finishes.drain()]);
    },
  };
}
