/**
 * What the engine needs from the rest of the gateway, declared here and implemented elsewhere
 * (storage, providers, limits): the engine depends on these shapes, not on their implementations.
 */
import type { ProviderKind } from "../config/types.js";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import type { ApiKeyWithWorkspace, GenerationOutcome, GenerationStart, KeyLimits } from "../storage/types.js";

/** The adapter registered for each provider kind. */
export type AdapterRegistry = ReadonlyMap<ProviderKind, ProviderAdapter>;

/** Where generation records go: one in-progress record at admission, one final record at settlement. */
export interface GenerationRecords {
  /** Writes the in-progress record; idempotent on the id. */
  start(record: GenerationStart): Promise<void>;
  /** Writes the final record (with its attempts) and debits the workspace; idempotent on the id. */
  finish(id: string, outcome: GenerationOutcome, start?: GenerationStart): Promise<void>;
}

export interface EngineStore {
  generations: GenerationRecords;
  /** A started record is visible to lookups at once (one instance, embedded): headers need not wait. */
  readonly startedRecordsVisibleAtOnce: boolean;
}

/**
 * The authenticated caller as admission needs it: the key (status, allowlist), its workspace (lock,
 * balance) and its limits, all from the one per-instance cache of key state.
 */
export interface AdmittedCaller extends ApiKeyWithWorkspace {
  limits: KeyLimits;
}
