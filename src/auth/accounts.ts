/** Workspaces and their API keys, as authentication resolves them. Money is integer micro-USD. */

export interface Workspace {
  id: string;
  name: string;
  balanceMicroUsd: number;
  invoicing: boolean;
  locked: boolean;
  createdAt: Date;
  /**
   * The exact response cache's policy for the workspace's keys (docs/response-cache.md): a
   * time-to-live in seconds for deterministic requests; null or absent: no policy.
   */
  responseCacheTtlSeconds?: number | null;
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
  /** The key's own response-cache policy, in seconds; null or absent: the workspace's. */
  responseCacheTtlSeconds?: number | null;
}

export interface ApiKeyWithWorkspace {
  key: ApiKeyRecord;
  workspace: Workspace;
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

/** Spend limits and rate limit of one key. */
export interface KeyLimits {
  dailyMicroUsd: number | null;
  monthlyMicroUsd: number | null;
  totalMicroUsd: number | null;
  /** null: the config's default applies (unlimited when that is unset too). */
  requestsPerMinute: number | null;
  /** Start of the current total-spend window (the last manual reset); null: since the key exists. */
  totalResetAt: Date | null;
}

/** What admission reads fresh for every request, in one round trip. */
export interface AdmissionSnapshot {
  workspace: Workspace;
  limits: KeyLimits;
  allowedModels: string[] | null;
}
