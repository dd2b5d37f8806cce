/**
 * Reports over usage records for the admin API: a workspace's latest requests, one request by id
 * whatever its workspace, and usage per UTC day and model. Both workspace queries read the
 * (workspace_id, created_at) index (migration 0009), one session's requests the partial
 * (workspace_id, session_id, created_at) one (0012); nothing here writes.
 */

import type { UsageReportRepository } from "../../admin/ports.js";
import { type GenerationRow, readGenerationRow } from "../usage-records/generation-repository.js";
import { readInteger } from "./read-integer.js";
import type { SqlClient } from "./sql-client.js";

interface DailyUsageRow {
  day: string;
  model: string;
  requests: unknown;
  tokens_prompt: unknown;
  tokens_completion: unknown;
  cost_micro_usd: unknown;
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
