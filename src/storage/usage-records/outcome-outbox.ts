/**
 * The outbox of generation outcomes that could not be written to the database: usage
 * records are parked durably and replayed idempotently. Two implementations: an append-only
 * JSON-lines file with fsync (`file-outcome-outbox.ts`, used whenever the gateway has a data
 * folder) and an in-memory twin (`memory-outcome-outbox.ts`, only for `memory://` data folders).
 */
import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";

export interface ParkedOutcome {
  /** The request id: the generation record the outcome belongs to. */
  id: string;
  outcome: GenerationOutcome;
  /**
   * The record's identity, so replay can write it even if its in-progress row was never written
   * (absent in lines parked before starts became optional: replay then needs the row).
   */
  start?: GenerationStart;
  /** ISO time of parking, for operators reading the file. */
  parkedAt: string;
}

export interface ClaimedBatch {
  /** For logs (a file name in the file outbox). */
  readonly name: string;
  readonly entries: ParkedOutcome[];
  /** Lines that are not a parked outcome (a write torn by a crash); set aside with the batch. */
  readonly unreadable: string[];
  /** Every entry is applied or set aside: drop the batch for good. */
  complete(): Promise<void>;
}

export interface OutcomeOutbox {
  /** false for the in-memory twin: parked outcomes do not survive a process restart. */
  readonly durable: boolean;
  /** Resolves once the entry would survive a crash of this process. */
  park(entry: ParkedOutcome): Promise<void>;
  /**
   * Batches to replay: everything parked since the last claim, plus batches whose replay has not
   * completed (a claimed batch is handed out again until `complete()` is called).
   */
  claim(): Promise<ClaimedBatch[]>;
  /** Keeps an entry that can never be applied where an operator can find it. */
  setAside(entry: ParkedOutcome | string, reason: string): Promise<void>;
  /** Waits for parks in flight. */
  close(): Promise<void>;
}

const LINE_VERSION = 1;

export function encodeParkedOutcome(entry: ParkedOutcome): string {
  return JSON.stringify({
    v: LINE_VERSION,
    id: entry.id,
    parkedAt: entry.parkedAt,
    outcome: entry.outcome,
    ...(entry.start ? { start: entry.start } : {}),
  });
}

/** null for anything that is not a whole line of the current version. */
export function decodeParkedOutcome(line: string): ParkedOutcome | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { v, id, parkedAt, outcome, start } = value as Record<string, unknown>;
  if (v !== LINE_VERSION || typeof id !== "string" || id === "") return null;
  if (typeof outcome !== "object" || outcome === null) return null;
  // Field values are checked by the repository's own validation when the outcome is replayed.
  return {
    id,
    parkedAt: typeof parkedAt === "string" ? parkedAt : "",
    outcome: outcome as GenerationOutcome,
    ...(typeof start === "object" && start !== null
      ? { start: decodeStart(start as Record<string, unknown>) }
      : {}),
  };
}

/** JSON turned `createdAt` into a string; the rest is checked by the repository on replay. */
export function decodeStart(start: Record<string, unknown>): GenerationStart {
  const { createdAt, ...rest } = start;
  const decoded = rest as unknown as GenerationStart;
  if (typeof createdAt === "string") decoded.createdAt = new Date(createdAt);
  return decoded;
}
