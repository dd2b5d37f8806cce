/**
 * Shared pieces of the multi-process limit tests: a catalog where every request costs exactly
 * $0.001 (100 output tokens at $10/M, input free) and reserves exactly that with max_tokens 100,
 * a fake upstream answering with that usage, and readers for what Redis and Postgres hold.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { LIMIT_KEYS } from "../../src/limits/limit-counters.js";
import {
  buildChatCompletion,
  buildTextChunks,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "./fake-openai-upstream.js";
import { TEST_REDIS_URL } from "./storage-modes.js";
import { createTestConfigFile, TEST_MODEL } from "./test-gateway.js";

export const REQUEST_COST_MICRO_USD = 1_000;
export const UPSTREAM_USAGE = { prompt_tokens: 12, completion_tokens: 100, total_tokens: 112 };
export const STREAM_PIECES = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight"];

/** The test catalog with input free and output at $10 per 1M tokens. */
export function createLimitsConfig(upstreamBaseUrl: string, limits: Record<string, unknown> = {}) {
  const config = createTestConfigFile(upstreamBaseUrl);
  return {
    ...config,
    models: (config.models as Array<Record<string, unknown>>).map((model) => ({
      ...model,
      pricing: { prompt: "0", completion: "10" },
    })),
    limits,
  };
}

/** Answers after a short pause (so reservations overlap), streaming when asked, slowly. */
export async function startPricedUpstream(options: { delayMs?: number; pieceDelayMs?: number } = {}) {
  const upstream: FakeOpenAiUpstream = await startFakeOpenAiUpstream({
    handler: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 20));
      if (request.body?.stream === true) {
        const chunks = buildTextChunks(STREAM_PIECES, { usage: UPSTREAM_USAGE });
        const steps = chunks.flatMap((chunk) => [{ delayMs: options.pieceDelayMs ?? 15 }, { data: chunk }]);
        return fakeReply.sse(steps);
      }
      return fakeReply.json(buildChatCompletion({ usage: UPSTREAM_USAGE }));
    },
  });
  return upstream;
}

export function chatBody(extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    model: TEST_MODEL,
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 100,
    ...extra,
  });
}

export interface LedgerView {
  /** Σ cost of the key's usage ledger entries. */
  keySpendMicroUsd: number;
  balanceMicroUsd: number;
  generations: number;
  inProgress: number;
  byStatus: Record<string, number>;
}

export async function readLedger(
  databaseUrl: string,
  keyId: string,
  workspaceId: string,
): Promise<LedgerView> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const spend = await client.query(
      `SELECT COALESCE(-SUM(l.amount_micro_usd), 0)::text AS spend
       FROM ledger_entries l JOIN generations g ON g.id = l.generation_id
       WHERE g.api_key_id = $1 AND l.kind = 'usage'`,
      [keyId],
    );
    const balance = await client.query(
      "SELECT balance_micro_usd::text AS balance FROM workspaces WHERE id = $1",
      [workspaceId],
    );
    const statuses = await client.query(
      "SELECT status, count(*)::int AS count FROM generations WHERE api_key_id = $1 GROUP BY status",
      [keyId],
    );
    const byStatus: Record<string, number> = Object.fromEntries(
      statuses.rows.map((row) => [row.status as string, row.count as number]),
    );
    return {
      keySpendMicroUsd: Number(spend.rows[0].spend),
      balanceMicroUsd: Number(balance.rows[0].balance),
      generations: Object.values(byStatus).reduce((sum, count) => sum + count, 0),
      inProgress: byStatus.in_progress ?? 0,
      byStatus,
    };
  } finally {
    await client.end();
  }
}

export interface CounterView {
  totalSpendMicroUsd: number | null;
  balanceMicroUsd: number | null;
  /** Reservations still held for the workspace (0 once everything settled). */
  reservedMicroUsd: number;
  leases: number;
}

/**
 * The Redis counters of a key's total window (never reset) and of its workspace, under `prefix`, on
 * the shared Redis unless a test's own is named.
 */
export async function readCounters(
  prefix: string,
  keyId: string,
  workspaceId: string,
  redisUrl = TEST_REDIS_URL,
): Promise<CounterView> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, keyPrefix: prefix });
  try {
    const [total, balance, reserved, leases] = await Promise.all([
      redis.hget(LIMIT_KEYS.spend(keyId, "t0"), "v"),
      redis.hget(LIMIT_KEYS.balance(workspaceId), "v"),
      redis.hget(LIMIT_KEYS.reserved(workspaceId), "*"),
      redis.hlen(LIMIT_KEYS.leases(workspaceId)),
    ]);
    return {
      totalSpendMicroUsd: total === null ? null : Number(total),
      balanceMicroUsd: balance === null ? null : Number(balance),
      reservedMicroUsd: reserved === null ? 0 : Number(reserved),
      leases,
    };
  } finally {
    redis.disconnect();
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes (then returns false). */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; attempt < 10_000 && Date.now() < deadline; attempt++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return check();
}
