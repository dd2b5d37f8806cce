/**
 * Spend limits, rate limit and total-spend resets of API keys, the sums of spend the limit counters
 * are seeded from, and the audit log of limit changes. Postgres is the source of truth: a key's
 * spend in a window is the sum of its generations' costs admitted in that window.
 */

import { GatewayError } from "../../errors/gateway-error.js";
import type { KeyLimitRepository, KeyLimits, SpendWindowName, TimeRange } from "../../limits/ports.js";
import { createApiKeyRepository } from "./api-key-repository.js";
import { insertAuditRow } from "./audit-rows.js";
import { createKeyAdminReports } from "./key-admin-reports.js";
import { assertSafeInteger, readInteger, readNullableInteger } from "./read-integer.js";
import type { SqlClient, SqlParameter } from "./sql-client.js";
import { readWorkspaceRow, WORKSPACE_COLUMNS, type WorkspaceRow } from "./workspace-repository.js";

interface LimitRow {
  workspace_id: string;
  allowed_models: string[] | null;
  daily_limit_micro_usd: unknown;
  monthly_limit_micro_usd: unknown;
  total_limit_micro_usd: unknown;
  requests_per_minute: unknown;
  total_spend_reset_at: Date | null;
  expires_at: Date | null;
  response_cache_ttl_seconds: number | null;
}

const LIMIT_COLUMNS =
  "workspace_id, allowed_models, daily_limit_micro_usd, monthly_limit_micro_usd, total_limit_micro_usd, " +
  "requests_per_minute, total_spend_reset_at, expires_at, response_cache_ttl_seconds";

const WINDOW_NAMES: readonly SpendWindowName[] = ["daily", "monthly", "total"];
/** The total window of a key that was never reset starts before any generation could exist. */
const BEGINNING = new Date(0);

function readLimitRow(row: LimitRow): KeyLimits {
  return {
    dailyMicroUsd: readNullableInteger(row.daily_limit_micro_usd, "daily_limit_micro_usd"),
    monthlyMicroUsd: readNullableInteger(row.monthly_limit_micro_usd, "monthly_limit_micro_usd"),
    totalMicroUsd: readNullableInteger(row.total_limit_micro_usd, "total_limit_micro_usd"),
    requestsPerMinute: readNullableInteger(row.requests_per_minute, "requests_per_minute"),
    totalResetAt: row.total_spend_reset_at === null ? null : new Date(row.total_spend_reset_at),
  };
}

/** Money in audit details is a decimal string, like every exact amount on the wire. */
function describeLimits(limits: KeyLimits, allowedModels: string[] | null): Record<string, unknown> {
  const money = (value: number | null) => (value === null ? null : String(value));
  return {
    daily_limit_micro_usd: money(limits.dailyMicroUsd),
    monthly_limit_micro_usd: money(limits.monthlyMicroUsd),
    total_limit_micro_usd: money(limits.totalMicroUsd),
    requests_per_minute: limits.requestsPerMinute,
    models: allowedModels,
  };
}

function unknownKey(keyId: string): GatewayError {
  return GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
}

/** `SUM(...) FILTER (...)` terms for the asked windows, with their parameters appended to `params`. */
function buildWindowSums(
  windows: Partial<Record<SpendWindowName, TimeRange>>,
  params: SqlParameter[],
): { names: SpendWindowName[]; columns: string } {
  const names = WINDOW_NAMES.filter((name) => windows[name] !== undefined);
  const columns = names
    .map((name) => {
      const range = windows[name]!;
      params.push(range.since);
      let condition = `created_at >= $${params.length}`;
      if (range.until !== null) {
        params.push(range.until);
        condition += ` AND created_at < $${params.length}`;
      }
      // Text, not a JSON number: a sum beyond 2^53 must fail loudly in readInteger, not round.
      return `COALESCE(SUM(cost_micro_usd) FILTER (WHERE ${condition}), 0)::bigint::text AS ${name}`;
    })
    .join(", ");
  return { names, columns };
}

export function createKeyLimitRepository(client: SqlClient): KeyLimitRepository {
  const apiKeys = createApiKeyRepository(client);

  async function get(keyId: string): Promise<KeyLimits | null> {
    const row = await readLimits(client, keyId, false);
    return row ? readLimitRow(row) : null;
  }

  async function readKeyAndLimits(keyId: string) {
    const [key, limits] = await Promise.all([apiKeys.get(keyId), get(keyId)]);
    if (!key || !limits) throw unknownKey(keyId);
    return { key, limits };
  }

  async function readLimits(tx: SqlClient, keyId: string, lock: boolean): Promise<LimitRow | undefined> {
    const [row] = await tx.query<LimitRow>(
      `SELECT ${LIMIT_COLUMNS} FROM api_keys WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
      [keyId],
    );
    return row;
  }

  async function sumSpend(
    tx: SqlClient,
    keyId: string,
    windows: Partial<Record<SpendWindowName, TimeRange>>,
  ): Promise<Partial<Record<SpendWindowName, number>>> {
    const params: SqlParameter[] = [keyId];
    const { names, columns } = buildWindowSums(windows, params);
    if (names.length === 0) return {};
    const [row] = await tx.query<Record<string, unknown>>(
      `SELECT ${columns} FROM generations WHERE api_key_id = $1`,
      params,
    );
    return Object.fromEntries(names.map((name) => [name, readInteger(row[name], name)]));
  }

  return {
    get,

    async appendAudit(entry) {
      await insertAuditRow(client, entry);
    },

    async readAdmission(keyId) {
      const workspaceColumns = WORKSPACE_COLUMNS.split(", ")
        .map((column) => `w.${column} AS w_${column}`)
        .join(", ");
      const keyColumns = LIMIT_COLUMNS.split(", ")
        .map((column) => `k.${column}`)
        .join(", ");
      const [row] = await client.query<LimitRow & Record<string, unknown>>(
        `SELECT ${keyColumns}, ${workspaceColumns}
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
         WHERE k.id = $1`,
        [keyId],
      );
      if (!row) return null;
      const workspace: Record<string, unknown> = {};
      for (const column of WORKSPACE_COLUMNS.split(", ")) workspace[column] = row[`w_${column}`];
      return {
        workspace: readWorkspaceRow(workspace as unknown as WorkspaceRow),
        limits: readLimitRow(row),
        allowedModels: row.allowed_models,
      };
    },

    async update(keyId, changes, actor) {
      for (const [name, value] of Object.entries(changes)) {
        if (typeof value === "number") {
          assertSafeInteger(value, name);
          if (value < 0) throw new RangeError(`${name} must not be negative, got ${value}`);
        }
      }
      await client.transaction(async (tx) => {
        const before = await readLimits(tx, keyId, true);
        if (!before) throw unknownKey(keyId);
        // A column is rewritten only when its change is given ($n::boolean flags), so null can
        // mean "clear" rather than "leave alone".
        const [after] = await tx.query<LimitRow>(
          `UPDATE api_keys SET
             daily_limit_micro_usd = CASE WHEN $2::boolean THEN $3::bigint ELSE daily_limit_micro_usd END,
             monthly_limit_micro_usd = CASE WHEN $4::boolean THEN $5::bigint ELSE monthly_limit_micro_usd END,
             total_limit_micro_usd = CASE WHEN $6::boolean THEN $7::bigint ELSE total_limit_micro_usd END,
             requests_per_minute = CASE WHEN $8::boolean THEN $9::integer ELSE requests_per_minute END,
             allowed_models = CASE WHEN $10::boolean THEN $11::text[] ELSE allowed_models END,
             expires_at = CASE WHEN $12::boolean THEN $13::timestamptz ELSE expires_at END,
             response_cache_ttl_seconds =
               CASE WHEN $14::boolean THEN $15::integer ELSE response_cache_ttl_seconds END,
             updated_at = now()
           WHERE id = $1
           RETURNING ${LIMIT_COLUMNS}`,
          [
            keyId,
            changes.dailyMicroUsd !== undefined,
            changes.dailyMicroUsd ?? null,
            changes.monthlyMicroUsd !== undefined,
            changes.monthlyMicroUsd ?? null,
            changes.totalMicroUsd !== undefined,
            changes.totalMicroUsd ?? null,
            changes.requestsPerMinute !== undefined,
            changes.requestsPerMinute ?? null,
            changes.allowedModels !== undefined,
            changes.allowedModels ?? null,
            changes.expiresAt !== undefined,
            changes.expiresAt ?? null,
            changes.responseCacheTtlSeconds !== undefined,
            changes.responseCacheTtlSeconds ?? null,
          ],
        );
        // Expiry and the cache policy are in the entry only when changed, so entries of limit
        // changes keep their shape.
        const expiry = (row: LimitRow) => ({
          ...(changes.expiresAt === undefined
            ? {}
            : { expires_at: row.expires_at === null ? null : new Date(row.expires_at).toISOString() }),
          ...(changes.responseCacheTtlSeconds === undefined
            ? {}
            : { response_cache_ttl_seconds: row.response_cache_ttl_seconds }),
        });
        await insertAuditRow(tx, {
          action: "key.limits_updated",
          actor,
          workspaceId: before.workspace_id,
          apiKeyId: keyId,
          details: {
            before: Object.assign(
              describeLimits(readLimitRow(before), before.allowed_models),
              expiry(before),
            ),
            after: Object.assign(describeLimits(readLimitRow(after), after.allowed_models), expiry(after)),
          },
        });
      });
      return readKeyAndLimits(keyId);
    },

    async resetTotal(keyId, { actor, at }) {
      const result = await client.transaction(async (tx) => {
        // The row lock orders concurrent resets; each one logs the spend of the window it closes.
        const before = await readLimits(tx, keyId, true);
        if (!before) throw unknownKey(keyId);
        const [{ reset_at: resetAt }] = await tx.query<{ reset_at: Date }>(
          "SELECT COALESCE($1::timestamptz, now()) AS reset_at",
          [at ?? null],
        );
        const since =
          before.total_spend_reset_at === null ? BEGINNING : new Date(before.total_spend_reset_at);
        const spent = await sumSpend(tx, keyId, { total: { since, until: new Date(resetAt) } });
        const previousSpendMicroUsd = spent.total ?? 0;
        await tx.query("UPDATE api_keys SET total_spend_reset_at = $2, updated_at = now() WHERE id = $1", [
          keyId,
          resetAt,
        ]);
        await insertAuditRow(tx, {
          action: "key.total_reset",
          actor,
          workspaceId: before.workspace_id,
          apiKeyId: keyId,
          details: {
            previous_total_spend_micro_usd: String(previousSpendMicroUsd),
            previous_window_start: before.total_spend_reset_at === null ? null : since.toISOString(),
            total_limit_micro_usd:
              before.total_limit_micro_usd === null ? null : String(before.total_limit_micro_usd),
          },
        });
        return { previousSpendMicroUsd, resetAt: new Date(resetAt) };
      });
      const { key, limits } = await readKeyAndLimits(keyId);
      return { key, limits, previousSpendMicroUsd: result.previousSpendMicroUsd, resetAt: result.resetAt };
    },

    sumSpend: (keyId, windows) => sumSpend(client, keyId, windows),

    async readSeedSnapshot({ keyId, workspaceId, windows, generationIds }) {
      // One statement, hence one snapshot: the sums, the balance and the finished state of the
      // listed generations must agree with each other (see src/limits/seed-counters.ts).
      const params: SqlParameter[] = [workspaceId, generationIds, keyId];
      const { names, columns } = buildWindowSums(windows, params);
      const spendColumn =
        names.length === 0
          ? "NULL::json"
          : `(SELECT row_to_json(s) FROM (SELECT ${columns} FROM generations WHERE api_key_id = $3) s)`;
      const [row] = await client.query<Record<string, unknown>>(
        `SELECT
           ${spendColumn} AS spend,
           (SELECT balance_micro_usd FROM workspaces WHERE id = $1) AS balance,
           (SELECT COALESCE(json_agg(json_build_object(
                     'id', id, 'key', api_key_id, 'cost', cost_micro_usd::text, 'at', created_at)), '[]'::json)
            FROM generations WHERE id = ANY($2::text[]) AND status <> 'in_progress') AS finished,
           $3::text AS key_id`,
        params,
      );
      const spend = (typeof row.spend === "string" ? JSON.parse(row.spend) : row.spend) as Record<
        string,
        unknown
      > | null;
      const finished = (typeof row.finished === "string" ? JSON.parse(row.finished) : row.finished) as Array<{
        id: string;
        key: string;
        cost: string;
        at: string;
      }>;
      if (row.balance === null || row.balance === undefined) {
        throw GatewayError.invalidRequest(`Unknown workspace "${workspaceId}"`, "workspace_id");
      }
      return {
        spendMicroUsd: Object.fromEntries(names.map((name) => [name, readInteger(spend?.[name], name)])),
        balanceMicroUsd: readInteger(row.balance, "balance_micro_usd"),
        finished: finished.map((entry) => ({
          id: entry.id,
          apiKeyId: entry.key,
          costMicroUsd: readInteger(entry.cost, "cost_micro_usd"),
          createdAt: new Date(entry.at),
        })),
      };
    },

    ...createKeyAdminReports(client),
  };
}
