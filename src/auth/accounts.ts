/** Workspaces and their API keys, as authentication resolves them. Money is integer micro-USD. */

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
