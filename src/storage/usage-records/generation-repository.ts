/**
 * Usage records. `finish` settles a generation exactly once: the guarded UPDATE (only while
 * in_progress) is the gate, and the ledger's UNIQUE generation_id backs it up, so retries, replays
 * and concurrent calls can never debit a workspace twice.
 */

import type { RequestSource } from "../../auth/accounts.js";
import { readIngressFormatName } from "../../canonical/ingress-format-name.js";
import type {
  GenerationAttempt,
  GenerationOutcome,
  GenerationRecord,
  GenerationStart,
  GenerationStatus,
} from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import { toPostgresJson } from "../sql/postgres-json.js";
import { assertSafeInteger, readInteger, readNullableInteger } from "../sql/read-integer.js";
import type { SqlClient } from "../sql/sql-client.js";

export interface GenerationRow {
  id: string;
  workspace_id: string;
  api_key_id: string;
  model: string;
  /** `vendor_messages` on rows written before migration 0011. */
  ingress_format: string;
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
  estimated_input_tokens: unknown;
  usage_estimated: boolean | null;
  /** Migration 0010; absent before it ran, NULL on rows written without attempts. */
  attempts?: GenerationAttempt[] | null;
  /** Migration 0012; absent before it ran, NULL when the request named no session or client. */
  session_id?: string | null;
  client?: string | null;
  /** Migration 0019; absent before it ran. */
  cache_hit?: boolean | null;
}

/** The columns every row has from its start (an in-progress row has only these). */
function readStartRow(row: GenerationRow): GenerationStart {
  const estimatedInputTokens = readNullableInteger(row.estimated_input_tokens, "estimated_input_tokens");
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    model: row.model,
    ingressFormat: readIngressFormatName(row.ingress_format),
    source: row.source,
    stream: row.stream,
    createdAt: new Date(row.created_at),
    ...(estimatedInputTokens === null ? {} : { estimatedInputTokens }),
    ...(typeof row.session_id === "string" ? { sessionId: row.session_id } : {}),
    ...(typeof row.client === "string" ? { client: row.client } : {}),
  };
}

export function readGenerationRow(row: GenerationRow): GenerationRecord {
  const toolCosts: Record<string, number> = {};
  for (const [tool, cost] of Object.entries(row.tool_costs_micro_usd ?? {})) {
    toolCosts[tool] = readInteger(cost, `tool_costs_micro_usd.${tool}`);
  }
  const latencyMs = readNullableInteger(row.latency_ms, "latency_ms");
  return {
    status: row.status,
    ...readStartRow(row),
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
    usageEstimated: row.usage_estimated === true,
    ...(row.attempts ? { attempts: row.attempts } : {}),
    ...(row.cache_hit === true ? { cacheHit: true } : {}),
    createdAt: new Date(row.created_at),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  };
}

/** The attempts as the `attempts` JSONB column takes them; NULL when the outcome has none. */
function encodeAttempts(outcome: GenerationOutcome): string | null {
  return outcome.attempts && outcome.attempts.length > 0 ? toPostgresJson(outcome.attempts) : null;
}

export function assertValidOutcome(outcome: GenerationOutcome): void {
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

/** A final outcome to record; `start` lets it be written even when no in-progress row exists. */
export interface FinishEntry {
  id: string;
  outcome: GenerationOutcome;
  start?: GenerationStart;
  /** When the generation finished, if not now (a journaled record written later: migration 0005). */
  finishedAt?: Date;
}

/** The SQL repository, plus the multi-row writes the group commit uses. */
export interface SqlGenerationRepository extends GenerationRepository {
  startMany(records: readonly GenerationStart[]): Promise<void>;
  /** Entries with `start`, in one statement: all or none. Ids must be distinct. */
  finishMany(entries: readonly (FinishEntry & { start: GenerationStart })[]): Promise<void>;
}

const START_COLUMNS = "id, workspace_id, api_key_id, model, ingress_format, source, stream, created_at";
const START_TYPES =
  "$1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::timestamptz[]";
/**
 * The columns of an in-progress row: the start, plus the prompt estimate an interrupted one is
 * billed and the client's session and name (migration 0012).
 */
const IN_PROGRESS_COLUMNS = `${START_COLUMNS}, estimated_input_tokens, session_id, client`;

function startColumnArrays(records: readonly GenerationStart[]) {
  return [
    records.map((record) => record.id),
    records.map((record) => record.workspaceId),
    records.map((record) => record.apiKeyId),
    records.map((record) => record.model),
    records.map((record) => record.ingressFormat),
    records.map((record) => record.source),
    records.map((record) => record.stream),
    records.map((record) => record.createdAt?.toISOString() ?? null),
  ];
}

/** See migrations/0004, 0008, 0010, 0012 and 0019: one call records many outcomes, all or none. */
const FINISH_MANY_SQL = `SELECT finish_generations(${START_TYPES},
  $9::text[], $10::text[], $11::text[], $12::text[],
  $13::integer[], $14::integer[], $15::integer[], $16::integer[], $17::integer[],
  $18::bigint[], $19::text[], $20::integer[], $21::text[], $22::timestamptz[], $23::boolean[],
  $24::text[], $25::text[], $26::text[], $27::boolean[])`;

export function createGenerationRepository(client: SqlClient): SqlGenerationRepository {
  async function startMany(records: readonly GenerationStart[]): Promise<void> {
    if (records.length === 0) return;
    await client.run(
      `INSERT INTO generations (${IN_PROGRESS_COLUMNS})
       SELECT id, workspace_id, api_key_id, model, ingress_format, source, stream, COALESCE(created_at, now()),
         estimated_input_tokens, session_id, client
       FROM unnest(${START_TYPES}, $9::integer[], $10::text[], $11::text[]) AS t(${IN_PROGRESS_COLUMNS})
       ON CONFLICT (id) DO NOTHING`,
      [
        ...startColumnArrays(records),
        records.map((record) => record.estimatedInputTokens ?? null),
        records.map((record) => record.sessionId ?? null),
        records.map((record) => record.client ?? null),
      ],
    );
  }

  async function finishMany(entries: readonly (FinishEntry & { start: GenerationStart })[]): Promise<void> {
    if (entries.length === 0) return;
    for (const entry of entries) {
      assertValidOutcome(entry.outcome);
      if (entry.start.id !== entry.id) throw new RangeError(`start.id must be "${entry.id}"`);
    }
    const outcomes = entries.map((entry) => entry.outcome);
    await client.run(FINISH_MANY_SQL, [
      ...startColumnArrays(entries.map((entry) => entry.start)),
      outcomes.map((outcome) => outcome.status),
      outcomes.map((outcome) => outcome.errorCode),
      outcomes.map((outcome) => outcome.upstreamProvider),
      outcomes.map((outcome) => outcome.upstreamModel),
      outcomes.map((outcome) => outcome.tokensPrompt),
      outcomes.map((outcome) => outcome.tokensCompletion),
      outcomes.map((outcome) => outcome.tokensReasoning),
      outcomes.map((outcome) => outcome.tokensCachedPrompt),
      outcomes.map((outcome) => outcome.tokensCacheWrite),
      outcomes.map((outcome) => outcome.costMicroUsd),
      outcomes.map((outcome) => JSON.stringify(outcome.toolCostsMicroUsd)),
      outcomes.map((outcome) => outcome.latencyMs),
      outcomes.map((outcome) => outcome.finishReason),
      entries.map((entry) => entry.finishedAt?.toISOString() ?? null),
      outcomes.map((outcome) => outcome.usageEstimated === true),
      outcomes.map((outcome) => encodeAttempts(outcome)),
      entries.map((entry) => entry.start.sessionId ?? null),
      entries.map((entry) => entry.start.client ?? null),
      outcomes.map((outcome) => outcome.cacheHit === true),
    ]);
  }

  /** Finalises a row that must already exist (outbox lines written before starts were optional). */
  async function finishStarted(id: string, outcome: GenerationOutcome): Promise<void> {
    assertValidOutcome(outcome);
    await client.transaction(async (tx) => {
      // Concurrent callers serialise on the row lock; the loser re-reads status and matches nothing.
      const [settled] = await tx.query<{ workspace_id: string }>(
        `UPDATE generations SET
           status = $2, error_code = $3, upstream_provider = $4, upstream_model = $5,
           tokens_prompt = $6, tokens_completion = $7, tokens_reasoning = $8,
           tokens_cached_prompt = $9, tokens_cache_write = $10, cost_micro_usd = $11,
           tool_costs_micro_usd = $12::jsonb, latency_ms = $13, finish_reason = $14, finished_at = now(),
           usage_estimated = $15, attempts = $16::jsonb, cache_hit = $17
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
          outcome.usageEstimated === true,
          encodeAttempts(outcome),
          outcome.cacheHit === true,
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
  }

  return {
    startMany,
    finishMany,
    start: (record) => startMany([record]),
    finish: (id, outcome, start) =>
      start === undefined ? finishStarted(id, outcome) : finishMany([{ id, outcome, start }]),

    async get(id, workspaceId) {
      // Filtering on the workspace in SQL means a foreign id is indistinguishable from an unknown one.
      const [row] = await client.query<GenerationRow>(
        "SELECT * FROM generations WHERE id = $1 AND workspace_id = $2",
        [id, workspaceId],
      );
      return row ? readGenerationRow(row) : null;
    },

    async listInProgress(admittedBefore, limit) {
      // generations_in_progress_idx (migration 0008): only rows still in progress are read.
      const rows = await client.query<GenerationRow>(
        `SELECT ${IN_PROGRESS_COLUMNS} FROM generations
         WHERE status = 'in_progress' AND created_at < $1 ORDER BY created_at, id COLLATE "C" LIMIT $2`,
        [admittedBefore.toISOString(), limit],
      );
      return rows.map(readStartRow);
    },
  };
}
