/**
 * What the rest of the gateway may ask of storage. Implementations: Postgres (pg) and embedded
 * PGlite share one SQL code path; SharedState has a Redis and an in-process implementation.
 * Money is integer micro-USD everywhere.
 */

export interface Workspace {
  id: string;
  name: string;
  balanceMicroUsd: number;
  invoicing: boolean;
  locked: boolean;
  createdAt: Date;
}

export type ApiKeyStatus = "active" | "disabled" | "revoked";
export type RequestSource = "api" | "playground" | "chat";

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string;
  /** Prefix plus last four characters, e.g. `hi-…a1B2`. */
  display: string;
  status: ApiKeyStatus;
  /** null: every model allowed. */
  allowedModels: string[] | null;
  expiresAt: Date | null;
  memberId: string | null;
  source: RequestSource;
  createdAt: Date;
}

export interface ApiKeyWithWorkspace {
  key: ApiKeyRecord;
  workspace: Workspace;
}

export type IngressFormatName = "chat_completions" | "responses" | "vendor_messages";
/**
 * `interrupted`: the instance that ran the request died before settling it; another instance (or
 * the same one restarted) settled it from its in-progress record (docs/durability.md).
 */
export type GenerationStatus = "in_progress" | "ok" | "error" | "cancelled" | "interrupted";

export interface GenerationStart {
  /** The request id (X-Request-Id). */
  id: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  ingressFormat: IngressFormatName;
  source: RequestSource;
  stream: boolean;
  /**
   * Admission time on the spend limits' clock (Redis TIME in distributed mode), so the record
   * falls into the same day and month window as its reservation; default: the database's now().
   */
  createdAt?: Date;
  /**
   * Admission's estimate of the prompt (tokens, media included): what an interrupted record is
   * billed when no instance is left to settle it with real usage. Absent in records written before
   * it existed (they are settled at 0 tokens).
   */
  estimatedInputTokens?: number;
}

export interface GenerationOutcome {
  status: Exclude<GenerationStatus, "in_progress">;
  errorCode: string | null;
  upstreamProvider: string | null;
  upstreamModel: string | null;
  tokensPrompt: number;
  tokensCompletion: number;
  tokensReasoning: number;
  tokensCachedPrompt: number;
  tokensCacheWrite: number;
  /** Model usage plus server tools, integer micro-USD. */
  costMicroUsd: number;
  toolCostsMicroUsd: Record<string, number>;
  latencyMs: number;
  finishReason: string | null;
  /**
   * The token counts are the gateway's estimate, not usage the upstream reported (it reported
   * none, or the stream ended before its final usage). Absent: false (outcomes parked or journaled
   * before the field existed).
   */
  usageEstimated?: boolean;
  /**
   * Every upstream call the run made, in order; the last `ok` one served (and is the only one
   * billed). Absent on outcomes written before attempts were recorded.
   */
  attempts?: GenerationAttempt[];
}

/** One upstream call of a generation (a route tried once). */
export interface GenerationAttempt {
  /** Provider id of the route. */
  provider: string;
  /** Catalog model slug the route belongs to (differs from the requested one after a fallback). */
  model: string;
  upstreamModel: string;
  /** `ok`, the error code it failed with, `cancelled`, or `circuit_open` (skipped without a call). */
  outcome: string;
  latencyMs: number;
}

export interface GenerationRecord extends GenerationStart, Partial<Omit<GenerationOutcome, "status">> {
  status: GenerationStatus;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface WorkspaceRepository {
  /** With `uniqueName`, refuses (invalid_request, param `name`) when a workspace has that name already. */
  create(input: {
    name: string;
    creditsMicroUsd: number;
    invoicing: boolean;
    uniqueName?: boolean;
  }): Promise<Workspace>;
  get(id: string): Promise<Workspace | null>;
  /** Oldest first; only those named `name` when given. */
  list(options: { name?: string; limit: number }): Promise<Workspace[]>;
  /** Adds (or with a negative amount removes) credit. */
  credit(id: string, amountMicroUsd: number): Promise<Workspace>;
  update(id: string, changes: { invoicing?: boolean; locked?: boolean }): Promise<Workspace>;
  count(): Promise<number>;
}

export interface ApiKeyRepository {
  create(input: {
    workspaceId: string;
    name?: string;
    allowedModels?: string[] | null;
    expiresAt?: Date | null;
    memberId?: string | null;
    source?: RequestSource;
    /** Spend limits and rate limit set together with the key (absent: none). */
    limits?: Partial<Omit<KeyLimits, "totalResetAt">>;
  }): Promise<{ key: ApiKeyRecord; secret: string }>;
  findByHash(hash: string): Promise<ApiKeyWithWorkspace | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  setStatus(id: string, status: ApiKeyStatus): Promise<ApiKeyRecord>;
  list(workspaceId: string): Promise<ApiKeyRecord[]>;
}

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

export type OneTimeKeySource = Exclude<RequestSource, "api">;

export interface MintedPlaygroundKey {
  /** Key material (`hi-…`): returned once, stored only as its hash. */
  secret: string;
  keyId: string;
  expiresAt: Date;
  source: OneTimeKeySource;
}

/** Minting was refused by the per-user rate limit. */
export interface PlaygroundMintRefusal {
  rateLimited: true;
  /** Whole seconds until the oldest mint in the window leaves it (at least 1). */
  retryAfterSeconds: number;
}

/**
 * One-time keys for the platform application (spec §4 rule 4, §5.12). Every key whose source is
 * not `api` is one of these: usable once, until it expires, then hard-purged.
 */
export interface PlaygroundKeyRepository {
  /** Mints a key unless the user already minted `limit` keys within `windowMs`. */
  mint(input: {
    workspaceId: string;
    userId: string;
    source: OneTimeKeySource;
    ttlMs: number;
    limit: number;
    windowMs: number;
  }): Promise<MintedPlaygroundKey | PlaygroundMintRefusal>;
  /**
   * Marks the key used in one conditional UPDATE; true only for the single caller that found it
   * unused and unexpired, on any instance.
   */
  consume(keyId: string): Promise<boolean>;
  /** Deletes expired one-time keys (usage records stay); returns how many went. */
  purgeExpired(): Promise<number>;
}

/** Requests and cost of one model on one UTC day. */
export interface DailyModelUsage {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  model: string;
  requests: number;
  tokensPrompt: number;
  tokensCompletion: number;
  costMicroUsd: number;
}

/** Read-only reports for the admin API; they read what the database holds (final or in progress). */
export interface UsageReportRepository {
  /** Newest first (by admission time), at most `limit`. */
  listGenerations(filter: {
    workspaceId: string;
    apiKeyId?: string;
    limit: number;
  }): Promise<GenerationRecord[]>;
  /** A request of any workspace, by its id. */
  findGeneration(id: string): Promise<GenerationRecord | null>;
  /** Usage admitted in [since, until), per UTC day and model, ordered by day then model. */
  sumDailyUsage(input: { workspaceId: string; since: Date; until: Date }): Promise<DailyModelUsage[]>;
}

export interface Store {
  readonly mode: "embedded" | "postgres";
  /**
   * A record given to `generations.start` is found by every lookup that can reach it at once,
   * before its write completes: true embedded, where the data folder's lock makes this instance
   * the only one and its repository answers for records not yet written. With PostgreSQL another
   * instance may be asked, so a caller that hands out the id first waits for the write.
   */
  readonly startedRecordsVisibleAtOnce: boolean;
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
  generations: GenerationRepository;
  playgroundKeys: PlaygroundKeyRepository;
  keyLimits: KeyLimitRepository;
  reports: UsageReportRepository;
  /** Round trip to the database; rejects when unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Cross-instance state (Redis, or in-process when REDIS_URL is unset). */
export interface SharedState {
  readonly mode: "redis" | "in-process";
  ping(): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  /** Stores `value` under `key` (prefixed like everything else) for `ttlMs`, replacing any value. */
  setValue(key: string, value: string, ttlMs: number): Promise<void>;
  /** null when absent or expired. */
  getValue(key: string): Promise<string | null>;
  deleteValue(key: string): Promise<void>;
  /**
   * `setValue`, and lists `key` in the sorted set `index` under `score`, in one round trip: values
   * that must be found by age when their owner never deletes them (records of a crashed instance).
   */
  setIndexedValue(index: string, key: string, value: string, score: number, ttlMs: number): Promise<void>;
  /** Up to `limit` keys of `index` scored at most `maxScore`, lowest first, with their values (null: expired). */
  listIndexedValues(
    index: string,
    maxScore: number,
    limit: number,
  ): Promise<Array<{ key: string; value: string | null }>>;
  /** Deletes `key` and its entry in `index`, in one round trip. */
  deleteIndexedValue(index: string, key: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Spend limits and rate limit of one key (issue 4). Integer micro-USD; null means none. */
export interface KeyLimits {
  dailyMicroUsd: number | null;
  monthlyMicroUsd: number | null;
  totalMicroUsd: number | null;
  /** null: the config's default applies (unlimited when that is unset too). */
  requestsPerMinute: number | null;
  /** Start of the current total-spend window (the last manual reset); null: since the key exists. */
  totalResetAt: Date | null;
}

/** Fields of `key update`; an absent field stays as it is, null clears it. */
export interface KeyLimitChanges {
  dailyMicroUsd?: number | null;
  monthlyMicroUsd?: number | null;
  totalMicroUsd?: number | null;
  requestsPerMinute?: number | null;
  /** null: every model. */
  allowedModels?: string[] | null;
}

/** What admission reads fresh for every request, in one round trip. */
export interface AdmissionSnapshot {
  workspace: Workspace;
  limits: KeyLimits;
  allowedModels: string[] | null;
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
  /** Newest first. */
  listAudit(filter: { apiKeyId?: string; limit?: number }): Promise<AuditEntry[]>;
}
