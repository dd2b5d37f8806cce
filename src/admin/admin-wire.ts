/**
 * Wire (snake_case JSON) form of admin records, shared by the admin routes, the CLI's `--json`
 * output and the CLI's HTTP transport, which decodes it back. Money travels twice: `balance_usd`
 * for reading, `balance_micro_usd` as an exact decimal string. Key hashes never leave storage.
 */
import type { ApiKeyRecord, ApiKeyStatus, RequestSource, Workspace } from "../auth/accounts.js";
import type { KeyLimits } from "../limits/ports.js";
import { convertMicroUsdToUsd } from "./parse-usd.js";

/** How many workspaces `workspace list` (and `GET /workspaces`) shows unless told, and at most. */
export const DEFAULT_WORKSPACE_LIST_LIMIT = 100;
export const MAX_WORKSPACE_LIST_LIMIT = 10_000;
/** `GET /internal/admin/workspaces/{id}/generations` (and the CLI's `requests`): how many requests a page lists. */
export const GENERATION_LIST_LIMIT = { default: 50, max: 200 } as const;

export interface WorkspaceJson {
  id: string;
  name: string;
  balance_usd: number;
  balance_micro_usd: string;
  invoicing: boolean;
  locked: boolean;
  created_at: string;
  /** The response-cache policy of the workspace's keys without their own, seconds; null: none. */
  response_cache_ttl_seconds: number | null;
}

export interface KeyJson {
  id: string;
  workspace_id: string;
  name: string;
  display: string;
  status: ApiKeyStatus;
  models: string[] | null;
  expires_at: string | null;
  member_id: string | null;
  source: RequestSource;
  created_at: string;
  /** The key's own response-cache policy, seconds; null: its workspace's. */
  response_cache_ttl_seconds: number | null;
}

/** A key's limits on the wire: null means "no limit" (rpm: the config default applies). */
export interface KeyLimitsJson {
  daily_limit_usd: number | null;
  daily_limit_micro_usd: string | null;
  monthly_limit_usd: number | null;
  monthly_limit_micro_usd: string | null;
  total_limit_usd: number | null;
  total_limit_micro_usd: string | null;
  requests_per_minute: number | null;
  /** Start of the current total-spend window; null: since the key was created. */
  total_reset_at: string | null;
}

export function encodeKeyLimits(limits: KeyLimits): KeyLimitsJson {
  const usd = (micro: number | null) => (micro === null ? null : convertMicroUsdToUsd(micro));
  const exact = (micro: number | null) => (micro === null ? null : String(micro));
  return {
    daily_limit_usd: usd(limits.dailyMicroUsd),
    daily_limit_micro_usd: exact(limits.dailyMicroUsd),
    monthly_limit_usd: usd(limits.monthlyMicroUsd),
    monthly_limit_micro_usd: exact(limits.monthlyMicroUsd),
    total_limit_usd: usd(limits.totalMicroUsd),
    total_limit_micro_usd: exact(limits.totalMicroUsd),
    requests_per_minute: limits.requestsPerMinute,
    total_reset_at: limits.totalResetAt?.toISOString() ?? null,
  };
}

export function decodeKeyLimits(json: KeyLimitsJson): KeyLimits {
  const micro = (text: string | null) => (text === null ? null : Number(text));
  return {
    dailyMicroUsd: micro(json.daily_limit_micro_usd),
    monthlyMicroUsd: micro(json.monthly_limit_micro_usd),
    totalMicroUsd: micro(json.total_limit_micro_usd),
    requestsPerMinute: json.requests_per_minute,
    totalResetAt: json.total_reset_at === null ? null : new Date(json.total_reset_at),
  };
}

export function encodeWorkspace(workspace: Workspace): WorkspaceJson {
  return {
    id: workspace.id,
    name: workspace.name,
    balance_usd: convertMicroUsdToUsd(workspace.balanceMicroUsd),
    balance_micro_usd: String(workspace.balanceMicroUsd),
    invoicing: workspace.invoicing,
    locked: workspace.locked,
    created_at: workspace.createdAt.toISOString(),
    response_cache_ttl_seconds: workspace.responseCacheTtlSeconds ?? null,
  };
}

export function encodeKey(key: ApiKeyRecord): KeyJson {
  return {
    id: key.id,
    workspace_id: key.workspaceId,
    name: key.name,
    display: key.display,
    status: key.status,
    models: key.allowedModels,
    expires_at: key.expiresAt?.toISOString() ?? null,
    member_id: key.memberId,
    source: key.source,
    created_at: key.createdAt.toISOString(),
    response_cache_ttl_seconds: key.responseCacheTtlSeconds ?? null,
  };
}

export function decodeWorkspace(json: WorkspaceJson): Workspace {
  return {
    id: json.id,
    name: json.name,
    balanceMicroUsd: Number(json.balance_micro_usd),
    invoicing: json.invoicing,
    locked: json.locked,
    createdAt: new Date(json.created_at),
    responseCacheTtlSeconds: json.response_cache_ttl_seconds ?? null,
  };
}

export function decodeKey(json: KeyJson): ApiKeyRecord {
  return {
    id: json.id,
    workspaceId: json.workspace_id,
    name: json.name,
    display: json.display,
    status: json.status,
    allowedModels: json.models,
    expiresAt: json.expires_at === null ? null : new Date(json.expires_at),
    memberId: json.member_id,
    source: json.source,
    createdAt: new Date(json.created_at),
    responseCacheTtlSeconds: json.response_cache_ttl_seconds ?? null,
  };
}
