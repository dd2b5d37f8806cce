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
export type GenerationStatus = "in_progress" | "ok" | "error" | "cancelled";

export interface GenerationStart {
  /** The request id (X-Request-Id). */
  id: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  ingressFormat: IngressFormatName;
  source: RequestSource;
  stream: boolean;
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
}

export interface GenerationRecord extends GenerationStart, Partial<Omit<GenerationOutcome, "status">> {
  status: GenerationStatus;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface WorkspaceRepository {
  create(input: { name: string; creditsMicroUsd: number; invoicing: boolean }): Promise<Workspace>;
  get(id: string): Promise<Workspace | null>;
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
   * transaction. Idempotent: a second call for the same id changes nothing.
   */
  finish(id: string, outcome: GenerationOutcome): Promise<void>;
  /** null when unknown or owned by another workspace. */
  get(id: string, workspaceId: string): Promise<GenerationRecord | null>;
}

export interface Store {
  readonly mode: "embedded" | "postgres";
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository;
  generations: GenerationRepository;
  /** Round trip to the database; rejects when unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Cross-instance state (Redis, or in-process when REDIS_URL is unset). */
export interface SharedState {
  readonly mode: "redis" | "in-process";
  ping(): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
