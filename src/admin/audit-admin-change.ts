/**
 * How admin changes describe themselves in the audit log (workspace create, credit and update, key
 * create and status, alert settings, playground keys): who, what, which workspace and key, and the
 * values before and after. Money is a decimal string of micro-USD, as in the limit entries the
 * key-limit repository writes itself. A repository writes the entry in the change's own transaction
 * (`AuditOf`).
 */
import type { ApiKeyRecord, Workspace } from "../auth/accounts.js";

/** Who made a change when the caller does not say. */
export const DEFAULT_ACTOR = "admin";

/** A workspace's administered settings as an audit entry shows them. */
export function describeWorkspace(workspace: Workspace): Record<string, unknown> {
  return {
    name: workspace.name,
    balance_micro_usd: String(workspace.balanceMicroUsd),
    invoicing: workspace.invoicing,
    locked: workspace.locked,
    response_cache_ttl_seconds: workspace.responseCacheTtlSeconds ?? null,
  };
}

/** A key's administered settings (never its secret) as an audit entry shows them. */
export function describeKey(key: ApiKeyRecord): Record<string, unknown> {
  return {
    name: key.name,
    status: key.status,
    source: key.source,
    allowed_models: key.allowedModels ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    response_cache_ttl_seconds: key.responseCacheTtlSeconds ?? null,
  };
}
