/**
 * Reports over usage records for the admin API: a workspace's latest requests, one request by id
 * whatever its workspace, and usage per UTC day and model. Both workspace queries read the
 * (workspace_id, created_at) index (migration 0009), one session's requests the partial
 * (workspace_id, session_id, created_at) one (0012); filtered pages by model, status or error code
 * the indexes of 0025 (docs/decisions/0338-activity-log-paging.md); nothing here writes.
 */

import type {
  GenerationCursor,
  GenerationFilter,
  ModelPerformance,
  UsageReportRepository,
} from "../../admin/ports.js";
import { type GenerationRow, readGenerationRow } from "../usage-records/generation-repository.js";
import { readInteger } from "./read-integer.js";
import type { SqlClient, SqlParameter } from "./sql-client.js";

interface DailyUsageRow {
  day: string;
  model: string;
  requests: unknown;
  tokens_prompt: unknown;
  tokens_completion: unknown;
  cost_micro_usd: unknown;
}

interface PagedGenerationRow extends GenerationRow {
  created_micros: unknown;
}

interface PerformanceRow {
  bucket: string;
  model: string;
  requests: unknown;
  errors: unknown;
  p50: unknown;
  p95: unknown;
  mean: unknown;
}

/** The admission time exactly as stored (microseconds), for a cursor a Date would round. */
const CREATED_MICROS = `(extract(epoch FROM created_at) * 1000000)::bigint AS created_micros`;
const MICROS_TO_TIMESTAMP = (param: string) =>
  `(timestamptz 'epoch' + ${param}::bigint * interval '1 microsecond')`;

/**
 * The WHERE clause of a filter: a condition only for what is given (never `$n IS NULL OR …`), so
 * the planner sees which index fits; values are parameters.
 */
function buildFilter(filter: GenerationFilter, params: SqlParameter[]): string[] {
  const add = (value: SqlParameter) => {
    params.push(value);
    return `$${params.length}`;
  };
  const conditions = [`workspace_id = ${add(filter.workspaceId)}`];
  if (filter.apiKeyId !== undefined) conditions.push(`api_key_id = ${add(filter.apiKeyId)}`);
  if (filter.sessionId !== undefined) conditions.push(`session_id = ${add(filter.sessionId)}`);
  if (filter.model !== undefined) conditions.push(`model = ${add(filter.model)}`);
  if (filter.status !== undefined) conditions.push(`status = ${add(filter.status)}`);
  if (filter.errorCode !== undefined) conditions.push(`error_code = ${add(filter.errorCode)}`);
  if (filter.since !== undefined) conditions.push(`created_at >= ${add(filter.since.toISOString())}`);
  if (filter.until !== undefined) conditions.push(`created_at < ${add(filter.until.toISOString())}`);
  return conditions;
}

function readNullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Math.round(Number(value));
}

export function createUsageReportRepository(client: SqlClient): UsageReportRepository {
  return {
    async listGenerations({ workspaceId, apiKeyId, sessionId, limit }) {
      // With a session: a condition of its own (not `$3 IS NULL OR …`), so the planner can use the
      // partial (workspace_id, session_id, created_at) index of migration 0012.
      const rows =
        sessionId === undefined
          ? await client.query<GenerationRow>(
              `SELECT * FROM generations
               WHERE workspace_id = $1 AND ($2::text IS NULL OR api_key_id = $2)
               ORDER BY created_at DESC, id COLLATE "C" DESC
               LIMIT $3`,
              [workspaceId, apiKeyId ?? null, limit],
            )
          : await client.query<GenerationRow>(
              `SELECT * FROM generations
               WHERE workspace_id = $1 AND session_id = $3 AND ($2::text IS NULL OR api_key_id = $2)
               ORDER BY created_at DESC, id COLLATE "C" DESC
               LIMIT $4`,
              [workspaceId, apiKeyId ?? null, sessionId, limit],
            );
      return rows.map(readGenerationRow);
    },

    async pageGenerations(filter, { after, limit }) {
      const params: SqlParameter[] = [];
      const conditions = buildFilter(filter, params);
      if (after !== undefined) {
        params.push(String(after.createdAtMicros), after.id);
        const at = MICROS_TO_TIMESTAMP(`$${params.length - 1}`);
        // The first condition bounds the index range; the second breaks ties at the same instant.
        conditions.push(`created_at <= ${at}`, `(created_at < ${at} OR id COLLATE "C" < $${params.length})`);
      }
      params.push(limit + 1);
      const rows = await client.query<PagedGenerationRow>(
        `SELECT *, ${CREATED_MICROS} FROM generations
         WHERE ${conditions.join(" AND ")}
         ORDER BY created_at DESC, id COLLATE "C" DESC
         LIMIT $${params.length}`,
        params,
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const next: GenerationCursor | null =
        rows.length > limit && last !== undefined
          ? { createdAtMicros: BigInt(String(last.created_micros)), id: last.id }
          : null;
      return { records: page.map(readGenerationRow), next };
    },

    async summarizePerformance({ workspaceId, since, until, bucketSeconds }) {
      const rows = await client.query<PerformanceRow>(
        `SELECT to_char(date_bin($4 * interval '1 second', created_at, $2::timestamptz) AT TIME ZONE 'UTC',
                  'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS bucket,
           model,
           count(*) AS requests,
           count(*) FILTER (WHERE status IN ('error', 'interrupted')) AS errors,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE status = 'ok') AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE status = 'ok') AS p95,
           avg(latency_ms) FILTER (WHERE status = 'ok') AS mean
         FROM generations
         WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3 AND status <> 'in_progress'
         GROUP BY 1, 2
         ORDER BY 1, 2`,
        [workspaceId, since.toISOString(), until.toISOString(), bucketSeconds],
      );
      return rows.map(
        (row): ModelPerformance => ({
          bucket: row.bucket,
          model: row.model,
          requests: readInteger(row.requests, "requests"),
          errors: readInteger(row.errors, "errors"),
          latencyP50Ms: readNullableNumber(row.p50),
          latencyP95Ms: readNullableNumber(row.p95),
          latencyMeanMs: readNullableNumber(row.mean),
        }),
      );
    },

    async findGeneration(id) {
      const [row] = await client.query<GenerationRow>("SELECT * FROM generations WHERE id = $1", [id]);
      return row ? readGenerationRow(row) : null;
    },

    async sumDailyUsage({ workspaceId, since, until }) {
      const rows = await client.query<DailyUsageRow>(
        `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, model,
           count(*) AS requests, sum(tokens_prompt) AS tokens_prompt,
           sum(tokens_completion) AS tokens_completion, sum(cost_micro_usd) AS cost_micro_usd
         FROM generations
         WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3
         GROUP BY 1, 2
         ORDER BY 1, 2`,
        [workspaceId, since.toISOString(), until.toISOString()],
      );
      return rows.map((row) => ({
        day: row.day,
        model: row.model,
        requests: readInteger(row.requests, "requests"),
        tokensPrompt: readInteger(row.tokens_prompt, "tokens_prompt"),
        tokensCompletion: readInteger(row.tokens_completion, "tokens_completion"),
        costMicroUsd: readInteger(row.cost_micro_usd, "cost_micro_usd"),
      }));
    },
  };
}
