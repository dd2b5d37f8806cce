/**
 * Two admin reports over key data: the audit log, paged by keyset (`id < cursor`, newest first), and
 * every key's settled spend of a workspace in one statement. Both read indexes only: the audit log
 * its primary key or `(workspace_id, id)` / `(api_key_id, id)` (migration 0024), the spend sums
 * `generations_key_created_idx` once per key (an index-only scan, as for one key's own page).
 */
import { GatewayError } from "../../errors/gateway-error.js";
import type { AuditEntry, AuditFilter, KeyLimitRepository, KeySpendSums } from "../../limits/ports.js";
import { readInteger, readNullableInteger } from "./read-integer.js";
import type { SqlClient, SqlParameter } from "./sql-client.js";

const DEFAULT_AUDIT_LIMIT = 100;

interface AuditRow {
  id: unknown;
  action: string;
  actor: string;
  workspace_id: string;
  api_key_id: string | null;
  details: Record<string, unknown> | string;
  created_at: Date;
}

export function createKeyAdminReports(
  client: SqlClient,
): Pick<KeyLimitRepository, "listAudit" | "sumWorkspaceKeySpend"> {
  return {
    async listAudit(filter: AuditFilter): Promise<AuditEntry[]> {
      // Only the conditions asked for are in the statement, so the planner sees each filter's index
      // rather than a generic `($1 IS NULL OR …)` plan.
      const params: SqlParameter[] = [];
      const conditions: string[] = [];
      const add = (column: string, operator: string, value: SqlParameter, cast = "") => {
        params.push(value);
        conditions.push(`${column} ${operator} $${params.length}${cast}`);
      };
      if (filter.workspaceId !== undefined) add("workspace_id", "=", filter.workspaceId);
      if (filter.apiKeyId !== undefined) add("api_key_id", "=", filter.apiKeyId);
      if (filter.beforeId !== undefined) {
        if (!/^\d{1,18}$/.test(filter.beforeId)) {
          throw GatewayError.invalidRequest("before must be an audit entry id (a whole number)", "before");
        }
        add("id", "<", filter.beforeId, "::bigint");
      }
      params.push(filter.limit ?? DEFAULT_AUDIT_LIMIT);
      const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
      const rows = await client.query<AuditRow>(
        `SELECT id, action, actor, workspace_id, api_key_id, details, created_at FROM audit_log
         ${where} ORDER BY id DESC LIMIT $${params.length}`,
        params,
      );
      return rows.map(
        (row): AuditEntry => ({
          id: String(readInteger(row.id, "id")),
          action: row.action,
          actor: row.actor,
          workspaceId: row.workspace_id,
          apiKeyId: row.api_key_id,
          details: typeof row.details === "string" ? JSON.parse(row.details) : row.details,
          createdAt: new Date(row.created_at),
        }),
      );
    },

    async sumWorkspaceKeySpend({ workspaceId, daily, monthly }) {
      // One lateral sum per key over its own index range: the scan starts at the earliest window
      // that counts (this month, or the total window when that is shorter).
      const rows = await client.query<Record<string, unknown>>(
        `SELECT k.id AS api_key_id, s.daily, s.monthly, s.total, k.daily_limit_micro_usd,
           k.monthly_limit_micro_usd, k.total_limit_micro_usd, k.requests_per_minute, k.total_spend_reset_at
         FROM api_keys k
         CROSS JOIN LATERAL (
           SELECT
             COALESCE(SUM(g.cost_micro_usd) FILTER (WHERE g.created_at >= $2 AND g.created_at < $3), 0)::bigint::text AS daily,
             COALESCE(SUM(g.cost_micro_usd) FILTER (WHERE g.created_at >= $4 AND g.created_at < $5), 0)::bigint::text AS monthly,
             COALESCE(SUM(g.cost_micro_usd) FILTER (
               WHERE g.created_at >= COALESCE(k.total_spend_reset_at, '-infinity'::timestamptz)), 0)::bigint::text AS total
           FROM generations g
           WHERE g.api_key_id = k.id
         ) s
         WHERE k.workspace_id = $1
         ORDER BY k.created_at, k.id COLLATE "C"`,
        [workspaceId, daily.since, daily.until, monthly.since, monthly.until],
      );
      return rows.map(
        (row): KeySpendSums => ({
          apiKeyId: String(row.api_key_id),
          daily: readInteger(row.daily, "daily"),
          monthly: readInteger(row.monthly, "monthly"),
          total: readInteger(row.total, "total"),
          limits: {
            dailyMicroUsd: readNullableInteger(row.daily_limit_micro_usd, "daily_limit_micro_usd"),
            monthlyMicroUsd: readNullableInteger(row.monthly_limit_micro_usd, "monthly_limit_micro_usd"),
            totalMicroUsd: readNullableInteger(row.total_limit_micro_usd, "total_limit_micro_usd"),
            requestsPerMinute: readNullableInteger(row.requests_per_minute, "requests_per_minute"),
            totalResetAt:
              row.total_spend_reset_at === null ? null : new Date(row.total_spend_reset_at as string | Date),
          },
        }),
      );
    },
  };
}
