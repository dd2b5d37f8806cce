/**
 * What administration (the admin API, the CLI, the embedded bootstrap) needs from outside:
 * storage implements these ports. Money is integer micro-USD.
 */
import type { ApiKeyRecord, ApiKeyStatus, RequestSource, Workspace } from "../auth/accounts.js";
import type { GenerationRecord, GenerationStatus } from "../engine/generation-record.js";
import type { AuditOf, KeyLimitRepository, KeyLimits } from "../limits/ports.js";

/**
 * Each change takes an optional audit entry (`AuditOf`), written in the change's own transaction:
 * both are committed or neither.
 */
export interface WorkspaceRepository {
  /** With `uniqueName`, refuses (invalid_request, param `name`) when a workspace has that name already. */
  create(
    input: {
      name: string;
      creditsMicroUsd: number;
      invoicing: boolean;
      uniqueName?: boolean;
    },
    audit?: AuditOf<Workspace>,
  ): Promise<Workspace>;
  get(id: string): Promise<Workspace | null>;
  /**
   * Oldest first, then by id (byte order) among those created in the same clock tick (the embedded
   * database's clock counts milliseconds); only those named `name` when given.
   */
  list(options: { name?: string; limit: number }): Promise<Workspace[]>;
  /** Adds (or with a negative amount removes) credit. */
  credit(id: string, amountMicroUsd: number, audit?: AuditOf<Workspace>): Promise<Workspace>;
  /** An absent field stays as it is; `responseCacheTtlSeconds` null clears the policy. */
  update(
    id: string,
    changes: { invoicing?: boolean; locked?: boolean; responseCacheTtlSeconds?: number | null },
    audit?: AuditOf<Workspace>,
  ): Promise<Workspace>;
  count(): Promise<number>;
}

export interface ApiKeyRepository {
  create(
    input: {
      workspaceId: string;
      name?: string;
      allowedModels?: string[] | null;
      expiresAt?: Date | null;
      memberId?: string | null;
      source?: RequestSource;
      /** Spend limits and rate limit set together with the key (absent: none). */
      limits?: Partial<Omit<KeyLimits, "totalResetAt">>;
      /** The key's own response-cache policy in seconds (absent: its workspace's). */
      responseCacheTtlSeconds?: number | null;
    },
    audit?: AuditOf<{ key: ApiKeyRecord; secret: string }>,
  ): Promise<{ key: ApiKeyRecord; secret: string }>;
  get(id: string): Promise<ApiKeyRecord | null>;
  setStatus(id: string, status: ApiKeyStatus, audit?: AuditOf<ApiKeyRecord>): Promise<ApiKeyRecord>;
  /** Oldest first, then by id (byte order) among those created in the same clock tick. */
  list(workspaceId: string): Promise<ApiKeyRecord[]>;
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

/** Which of a workspace's requests a listing, an export or a summary reads (all given conditions hold). */
export interface GenerationFilter {
  workspaceId: string;
  apiKeyId?: string;
  /** Only the requests of this client session (`session_id`). */
  sessionId?: string;
  /** The catalog model the request asked for. */
  model?: string;
  status?: GenerationStatus;
  errorCode?: string;
  /** Admitted at or after. */
  since?: Date;
  /** Admitted before. */
  until?: Date;
}

/**
 * Where a page of requests ends: the last row's admission time in whole microseconds since the
 * epoch (the database's precision, which a Date would round) and its id.
 */
export interface GenerationCursor {
  createdAtMicros: bigint;
  id: string;
}

export interface GenerationPage {
  records: GenerationRecord[];
  /** The last record's position, to ask for the rows after it; null when it was the last page. */
  next: GenerationCursor | null;
}

/** One model's finished requests in one time bucket. */
export interface ModelPerformance {
  /** The bucket's start (ISO-8601, UTC). */
  bucket: string;
  model: string;
  /** Finished requests (any status but in_progress). */
  requests: number;
  /** Of those, status `error` or `interrupted`. */
  errors: number;
  /** Latency of the `ok` requests that recorded one, in ms; null when there were none. */
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
}

/** Read-only reports for the admin API; they read what the database holds (final or in progress). */
export interface UsageReportRepository {
  /** Newest first (by admission time, then id in reverse byte order), at most `limit`. */
  listGenerations(filter: {
    workspaceId: string;
    apiKeyId?: string;
    /** Only the requests of this client session (`session_id`). */
    sessionId?: string;
    limit: number;
  }): Promise<GenerationRecord[]>;
  /**
   * One page of `filter`'s requests, newest first, those after `after` (keyset paging: each page
   * costs the same however deep it is).
   */
  pageGenerations(
    filter: GenerationFilter,
    options: { after?: GenerationCursor; limit: number },
  ): Promise<GenerationPage>;
  /** A request of any workspace, by its id. */
  findGeneration(id: string): Promise<GenerationRecord | null>;
  /** Usage admitted in [since, until), per UTC day and model, ordered by day then model. */
  sumDailyUsage(input: { workspaceId: string; since: Date; until: Date }): Promise<DailyModelUsage[]>;
  /** Latency and errors per model per bucket of `bucketSeconds` from `since` (aligned to it), ordered by bucket then model. */
  summarizePerformance(input: {
    workspaceId: string;
    since: Date;
    until: Date;
    bucketSeconds: number;
  }): Promise<ModelPerformance[]>;
}

export interface AdminStore {
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
  keyLimits: KeyLimitRepository;
}
