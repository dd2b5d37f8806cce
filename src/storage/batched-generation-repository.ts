/**
 * Usage records through group commits (docs/performance.md): concurrent `start`s share one
 * multi-row INSERT and concurrent `finish`es one statement that finalises every row, writes their
 * ledger lines and debits each workspace once. A caller still waits until its own record is
 * committed, so everything the un-batched repository promised holds; only the number of round
 * trips and transactions per request drops.
 */

import type { FinishEntry, SqlGenerationRepository } from "./generation-repository.js";
import { createGroupCommit } from "./group-commit.js";
import type { GenerationRepository, GenerationStart } from "./types.js";

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

  return {
    start: (record) => starts.submit(record),
    finish: (id, outcome, start) =>
      start === undefined ? sql.finish(id, outcome) : finishes.submit({ id, outcome, start }),
    get: (id, workspaceId) => sql.get(id, workspaceId),
    async drain() {
      await Promise.all([starts.drain(), finishes.drain()]);
    },
  };
}
