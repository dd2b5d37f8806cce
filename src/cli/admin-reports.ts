/**
 * The admin API's read-only reports as the CLI uses them (`key show`, `key spend`, `workspace
 * usage`, `requests`): the same wire documents whichever way the CLI reaches them. Through a
 * running gateway they are its answers; with the database opened directly, the key's spend and
 * the workspace's usage are read by the same functions the admin API uses, and the request list,
 * which only a gateway renders, is refused with the way to get it.
 */
import type { KeySpendReportJson } from "../admin/read-key-spend.js";
import { encodeKeySpendReport, readKeySpend } from "../admin/read-key-spend.js";
import { readWorkspaceUsage, USAGE_DAYS, type WorkspaceUsageJson } from "../admin/read-workspace-usage.js";
import { createUnknownWorkspaceError } from "../admin/workspace-errors.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Store } from "../storage/store.js";

/** One request as `GET /internal/admin/workspaces/{id}/generations` lists it (the fields the CLI prints). */
export interface AdminRequestJson {
  id: string;
  model: string;
  status: string;
  stream: boolean;
  api_key_id: string;
  upstream_provider: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  total_cost: number;
  cost_micro_usd: string;
  latency_ms: number | null;
  created_at: string;
  [field: string]: unknown;
}

export interface RequestListFilter {
  keyId?: string;
  sessionId?: string;
  limit?: number;
}

export interface AdminReports {
  keySpend(keyId: string): Promise<KeySpendReportJson>;
  /** `days` absent: the admin API's default. */
  workspaceUsage(workspaceId: string, days?: number): Promise<WorkspaceUsageJson>;
  listRequests(workspaceId: string, filter: RequestListFilter): Promise<{ data: AdminRequestJson[] }>;
}

export type AdminGet = <T>(path: string) => Promise<T>;

export function createHttpAdminReports(get: AdminGet): AdminReports {
  const segment = encodeURIComponent;
  return {
    keySpend: (keyId) => get(`/keys/${segment(keyId)}/spend`),
    workspaceUsage: (workspaceId, days) =>
      get(`/workspaces/${segment(workspaceId)}/usage${days === undefined ? "" : `?days=${days}`}`),
    listRequests: (workspaceId, filter) => {
      const query = new URLSearchParams();
      if (filter.limit !== undefined) query.set("limit", String(filter.limit));
      if (filter.keyId !== undefined) query.set("key_id", filter.keyId);
      if (filter.sessionId !== undefined) query.set("session_id", filter.sessionId);
      return get(`/workspaces/${segment(workspaceId)}/generations${query.size > 0 ? `?${query}` : ""}`);
    },
  };
}

/**
 * `spendGuard` absent (no REDIS_URL): what requests in flight hold is unknown to this process, and
 * reported as null, as the admin API reports an unreachable limit store.
 */
export function createDirectAdminReports(
  store: Pick<Store, "apiKeys" | "keyLimits" | "reports" | "workspaces">,
  spendGuard: Pick<SpendGuard, "now" | "readReserved"> | undefined,
  defaultRequestsPerMinute: number | null,
): AdminReports {
  const guard = spendGuard ?? { now: async () => Date.now(), readReserved: async () => null };
  return {
    async keySpend(keyId) {
      const key = await store.apiKeys.get(keyId);
      const spend = key
        ? await readKeySpend({ store, spendGuard: guard, defaultRequestsPerMinute }, key)
        : null;
      if (!key || !spend) throw GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
      return encodeKeySpendReport(key, spend);
    },
    async workspaceUsage(workspaceId, days) {
      const workspace = await store.workspaces.get(workspaceId);
      if (!workspace) throw createUnknownWorkspaceError(workspaceId, "id");
      return readWorkspaceUsage(store.reports, workspace.id, days ?? USAGE_DAYS.default);
    },
    async listRequests() {
      throw GatewayError.invalidRequest(
        "requests reads a running gateway's admin API (it renders the records): start the gateway, " +
          "or set GATEWAY_URL to one that uses this database",
      );
    },
  };
}
