/**
 * What the engine needs from outside to run and settle a generation: storage implements these
 * ports, the gateway wires them. The engine never imports storage.
 */
import type { GenerationOutcome, GenerationRecord, GenerationStart } from "./generation-record.js";

export interface GenerationRepository {
  /** Writes the in-progress record; idempotent on the id. */
  start(record: GenerationStart): Promise<void>;
  /**
   * Finalises the record and debits the workspace balance by `outcome.costMicroUsd` in one
   * transaction. Idempotent: a second call for the same id changes nothing. With `start`, the
   * record is written final even if it was never started (a start that failed, or one that lives
   * only in Redis or the journal); without it, an unknown id fails.
   */
  finish(id: string, outcome: GenerationOutcome, start?: GenerationStart): Promise<void>;
  /** null when unknown or owned by another workspace. */
  get(id: string, workspaceId: string): Promise<GenerationRecord | null>;
  /**
   * Records still in progress that were admitted before `admittedBefore`, oldest first, at most
   * `limit`: what the sweep of interrupted requests settles (engine/interrupted-sweep.ts).
   */
  listInProgress(admittedBefore: Date, limit: number): Promise<GenerationStart[]>;
}

export interface EngineStore {
  generations: GenerationRepository;
  /**
   * A record given to `generations.start` is found by every lookup that can reach it at once,
   * before its write completes: true embedded, where the data folder's lock makes this instance
   * the only one and its repository answers for records not yet written. With PostgreSQL another
   * instance may be asked, so a caller that hands out the id first waits for the write.
   */
  readonly startedRecordsVisibleAtOnce: boolean;
}
