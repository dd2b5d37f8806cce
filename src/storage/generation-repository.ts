/**
 * Usage records. `finish` settles a generation exactly once: the guarded UPDATE (only while
 * in_progress) is the gate, and the ledger's UNIQUE generation_id backs it up, so retries, replays
 * and concurrent calls can never debit a workspace twice.
 */
import { assertSafeInteger, readInteger, readNullableInteger } from "./read-integer.js";
import type { SqlClient } from "./sql-client.js";
import type {
  GenerationOutcome,
  GenerationRecord,
  GenerationRepository,
  GenerationStatus,
  IngressFormatName,
  RequestSource,
} from "./types.js";

interface GenerationRow {
  id: string;
  workspace_id: string;
  api_key_id: string;
  model: string;
  ingress_format: IngressFormatName;
  source: RequestSource;
  stream: boolean;
  status: GenerationStatus;
  error_code: string | null;
  upstream_provider: string | null;
  upstream_model: string | null;
  tokens_prompt: unknown;
  tokens_completion: unknown;
  tokens_reasoning: unknown;
  tokens_cached_prompt: unknown;
  tokens_cache_write: unknown;
  cost_micro_usd: unknown;
  tool_costs_micro_usd: Record<string, unknown> | null;
  latency_ms: unknown;
  finish_reason: string | null;
  created_at: Date;
  finished_at: Date | null;
}

function readGenerationRow(row: GenerationRow): GenerationRecord {
  const toolCosts: Record<string, number> = {};
  for (const [tool, cost] of Object.entries(row.tool_costs_micro_usd ?? {})) {
    toolCosts[tool] = readInteger(cost, `tool_costs_micro_usd.${tool}`);
  }
  const latencyMs = readNullableInteger(row.latency_ms, "latency_ms");
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    model: row.model,
    ingressFormat: row.ingress_format,
    source: row.source,
    stream: row.stream,
    status: row.status,
    errorCode: row.error_code,
    upstreamProvider: row.upstream_provider,
    upstreamModel: row.upstream_model,
    tokensPrompt: readInteger(row.tokens_prompt, "tokens_prompt"),
    tokensCompletion: readInteger(row.tokens_completion, "tokens_completion"),
    tokensReasoning: readInteger(row.tokens_reasoning, "tokens_reasoning"),
    tokensCachedPrompt: readInteger(row.tokens_cached_prompt, "tokens_cached_prompt"),
    tokensCacheWrite: readInteger(row.tokens_cache_write, "tokens_cache_write"),
    costMicroUsd: readInteger(row.cost_micro_usd, "cost_micro_usd"),
    toolCostsMicroUsd: toolCosts,
    ...(latencyMs === null ? {} : { latencyMs }),
    finishReason: row.finish_reason,
    createdAt: new Date(row.created_at),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  };
}

function assertValidOutcome(outcome: GenerationOutcome): void {
  if ((outcome.status as string) === "in_progress") throw new RangeError("finish() needs a final status");
  for (const [name, value] of Object.entries({
    costMicroUsd: outcome.costMicroUsd,
    tokensPrompt: outcome.tokensPrompt,
    tokensCompletion: outcome.tokensCompletion,
    tokensReasoning: outcome.tokensReasoning,
    tokensCachedPrompt: outcome.tokensCachedPrompt,
    tokensCacheWrite: outcome.tokensCacheWrite,
    latencyMs: outcome.latencyMs,
    ...outcome.toolCostsMicroUsd,
  })) {
    assertSafeInteger(value, name);
    if (value < 0) throw new RangeError(`${name} must not be negative, got ${value}`);
  }
}

export function createGenerationRepository(client: SqlClient): GenerationRepository {
  return {
    async start(record) {
      await client.query(
        `INSERT INTO generations (id, workspace_id, api_key_id, model, ingress_format, source, stream, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE($8::timestamptz, now()))
         ON CONFLICT (id) DO NOTHING`,
        [
          record.id,
          record.workspaceId,
          record.apiKeyId,
          record.model,
          record.ingressFormat,
          record.source,
          record.stream,
          record.createdAt ?? null,
        ],
      );
    },

    async finish(id, outcome) {
      assertValidOutcome(outcome);
      await client.transaction(async (tx) => {
        // Concurrent callers serialise on the row lock; the loser re-reads status and matches nothing.
        const [settled] = await tx.query<{ workspace_id: string }>(
          `UPDATE generations SET
             status = $2, error_code = $3, upstream_provider = $4, upstream_model = $5,
             tokens_prompt = $6, tokens_completion = $7, tokens_reasoning = $8,
             tokens_cached_prompt = $9, tokens_cache_write = $10, cost_micro_usd = $11,
             tool_costs_micro_usd = $12::jsonb, latency_ms = $13, finish_reason = $14, finished_at = now()
           WHERE id = $1 AND status = 'in_progress'
           RETURNING workspace_id`,
          [
            id,
            outcome.status,
            outcome.errorCode,
            outcome.upstreamProvider,
            outcome.upstreamModel,
            outcome.tokensPrompt,
            outcome.tokensCompletion,
            outcome.tokensReasoning,
            outcome.tokensCachedPrompt,
            outcome.tokensCacheWrite,
            outcome.costMicroUsd,
            JSON.stringify(outcome.toolCostsMicroUsd),
            outcome.latencyMs,
            outcome.finishReason,
          ],
        );
        if (!settled) {
          const [existing] = await tx.query("SELECT 1 FROM generations WHERE id = $1", [id]);
          if (!existing) throw new Error(`Generation "${id}" cannot be finished: it was never started`);
          return; // Already final: a repeated finish is a no-op.
        }
        // A zero cost changes no balance, so it needs no ledger line.
        if (outcome.costMicroUsd === 0) return;
        await tx.query(
          `INSERT INTO ledger_entries (workspace_id, generation_id, kind, amount_micro_usd)
           VALUES ($1, $2, 'usage', $3)`,
          [settled.workspace_id, id, -outcome.costMicroUsd],
        );
        await tx.query("UPDATE workspaces SET balance_micro_usd = balance_micro_usd - $2 WHERE id = $1", [
          settled.workspace_id,
          outcome.costMicroUsd,
        ]);
      });
    },

    async get(id, workspaceId) {
      // Filtering on the workspace in SQL means a foreign id is indistinguishable from an unknown one.
      const [row] = await client.query<GenerationRow>(
        "SELECT * FROM generations WHERE id = $1 AND workspace_id = $2",
        [id, workspaceId],
      );
      return row ? readGenerationRow(row) : null;
    },
  };
}
