/**
 * The per-key limits and what the spend guard, admission and administration read and write of
 * them: storage implements `KeyLimitRepository`. Money is integer micro-USD; null means none.
 */
import type { AdmissionSnapshot, ApiKeyRecord, KeyLimits } from "../auth/accounts.js";

export type { AdmissionSnapshot, KeyLimits };

/** Fields of `key update`; an absent field stays as it is, null clears it. */
export interface KeyLimitChanges {
  dailyMicroUsd?: number | null;
  monthlyMicroUsd?: number | null;
  totalMicroUsd?: number | null;
  requestsPerMinute?: number | null;
  /** null: every model. */
  allowedModels?: string[] | null;
  /** null: the key never expires. */
  expiresAt?: Date | null;
  /** The key's response-cache policy in seconds; null: its workspace's (docs/response-cache.md). */
  responseCacheTtlSeconds?: number | null;
}

export type SpendWindowName = "daily" | "monthly" | "total";

/** A half-open time range [since, until); until null: open-ended. */
export interface TimeRange {
  since: Date;
  until: Date | null;
}

/** One consistent read (a single statement) of what spend counters are rebuilt from. */
export interface SpendSeedSnapshot {
  spendMicroUsd: Partial<Record<SpendWindowName, number>>;
  balanceMicroUsd: number;
  /** Those of the asked generation ids that are final: what they cost and when they were admitted. */
  finished: Array<{ id: string; apiKeyId: string; costMicroUsd: number; createdAt: Date }>;
}

export interface AuditEntry {
  id: string;
  action: string;
  actor: string;
  workspaceId: string;
  apiKeyId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** What an admin change writes to the audit log: who, what, which target, before/after. */
export type AuditRecord = Omit<AuditEntry, "id" | "createdAt">;

/**
 * The audit entry of a change, made from the change's result: a repository writes it in the
 * change's own transaction.
 */
export type AuditOf<T> = (result: T) => AuditRecord;

export interface KeyLimitRepository {
  /** null when the key does not exist. */
  get(keyId: string): Promise<KeyLimits | null>;
  readAdmission(keyId: string): Promise<AdmissionSnapshot | null>;
  /** Applies the changes and writes an audit entry in one transaction. */
  update(
    keyId: string,
    changes: KeyLimitChanges,
    actor: string,
  ): Promise<{ key: ApiKeyRecord; limits: KeyLimits }>;
  /**
   * Starts a new total-spend window at `at` (default now()) and audit-logs the spend of the old
   * one, in one transaction.
   */
  resetTotal(
    keyId: string,
    input: { actor: string; at?: Date },
  ): Promise<{ key: ApiKeyRecord; limits: KeyLimits; previousSpendMicroUsd: number; resetAt: Date }>;
  /** Settled spend (sum of generation costs) of the key in each window. */
  sumSpend(
    keyId: string,
    windows: Partial<Record<SpendWindowName, TimeRange>>,
  ): Promise<Partial<Record<SpendWindowName, number>>>;
  readSeedSnapshot(input: {
    keyId: string;
    workspaceId: string;
    windows: Partial<Record<SpendWindowName, TimeRange>>;
    generationIds: string[];
  }): Promise<SpendSeedSnapshot>;
  /**
   * Newest first (by id). `beforeId` pages on: only entries older than that id (keyset paging, so a
   * page costs the same however deep it is).
   */
  listAudit(filter: AuditFilter): Promise<AuditEntry[]>;
  /**
   * Writes one audit entry on its own, after its change: only for a change whose repository takes
   * no entry (a playground key's mint, whose port belongs to auth/). Every other admin change
   * writes its entry in its own transaction (`AuditOf`).
   */
  appendAudit(entry: AuditRecord): Promise<void>;
  /** Settled spend of every key of a workspace in one statement: today, this month, its total window. */
  sumWorkspaceKeySpend(input: {
    workspaceId: string;
    daily: TimeRange;
    monthly: TimeRange;
  }): Promise<KeySpendSums[]>;
}

export interface AuditFilter {
  apiKeyId?: string;
  workspaceId?: string;
  /** An entry id (decimal text): only older entries. */
  beforeId?: string;
  limit?: number;
}

/** A key's limits and settled spend per window, micro-USD; the total window starts at its last reset. */
export interface KeySpendSums {
  apiKeyId: string;
  limits: KeyLimits;
  daily: number;
  monthly: number;
  total: number;
}
