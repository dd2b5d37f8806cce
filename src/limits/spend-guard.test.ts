// The spend guard against a real store in both storage modes, with both counter implementations:
// concurrent admissions stop exactly at the limit, the output cap is lowered only when the caller
// set none, errors name the limit, and an unreachable Redis refuses rather than overspends.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Redis } from "ioredis";
import {
  createTestStore,
  forEachStorageMode,
  requireMode,
  TEST_REDIS_URL,
} from "../../test/helpers/storage-modes.js";
import type { CanonicalRequest } from "../canonical/index.js";
import { GatewayError } from "../errors/gateway-error.js";
import { convertUsdPerMillionToPicoPerToken } from "../metering/prices.js";
import { createInProcessLimitCounters } from "../storage/shared-state/in-process-limit-counters.js";
import { createRedisLimitCounters } from "../storage/shared-state/redis-limit-counters.js";
import { openRedisScriptRunner } from "../storage/shared-state/redis-script-runner.js";
import type { Store } from "../storage/store.js";
import type { LimitCounters } from "./limit-counters.js";
import type { KeyLimits } from "./ports.js";
import { type AdmissionInput, createSpendGuard, type SpendGuard } from "./spend-guard.js";
import { estimateWorstCase } from "./worst-case-cost.js";

/** $0 per input token, $10 per 1M output tokens: 100 output tokens cost exactly 1,000 µUSD. */
const PRICES = {
  promptPicoUsd: 0n,
  completionPicoUsd: convertUsdPerMillionToPicoPerToken("10"),
  cachedPromptPicoUsd: 0n,
  cacheWritePicoUsd: 0n,
  cacheWrite1hPicoUsd: 0n,
};
const REQUEST: CanonicalRequest = {
  model: "test/model",
  system: [],
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  sampling: {},
  serverTools: [],
  toolEvents: false,
  stream: false,
  passthrough: {},
};
const BOUNDS = {
  rules: { tokenizer: "o200k", imageTokens: () => 1_600, pdfPageTokens: 3_000, toolPromptTokens: 0 },
  contextLength: 128_000,
} as const;
const NO_LIMITS: KeyLimits = {
  dailyMicroUsd: null,
  monthlyMicroUsd: null,
  totalMicroUsd: null,
  requestsPerMinute: null,
  totalResetAt: null,
};

async function openCounters(
  mode: "in-process" | "redis",
): Promise<{ counters: LimitCounters; cleanup(): Promise<void> }> {
  if (mode === "in-process") {
    const counters = createInProcessLimitCounters();
    return { counters, cleanup: () => counters.close() };
  }
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const counters = createRedisLimitCounters(
    await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix }),
  );
  return {
    counters,
    async cleanup() {
      await counters.close();
      const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    },
  };
}

async function createKey(store: Store, limits: Partial<KeyLimits>, credits = 1_000_000) {
  const workspace = await store.workspaces.create({ name: "w", creditsMicroUsd: credits, invoicing: false });
  const { key } = await store.apiKeys.create({ workspaceId: workspace.id, limits });
  return { keyId: key.id, workspaceId: workspace.id, limits: { ...NO_LIMITS, ...limits } };
}

function admission(
  key: Awaited<ReturnType<typeof createKey>>,
  overrides: Partial<AdmissionInput> = {},
): AdmissionInput {
  return {
    requestId: `req_${randomBytes(6).toString("hex")}`,
    keyId: key.keyId,
    workspaceId: key.workspaceId,
    limits: key.limits,
    requestsPerMinute: null,
    checkBalance: true,
    worstCase: estimateWorstCase(REQUEST, PRICES, 100, BOUNDS),
    outputCapAdjustable: false,
    ...overrides,
  };
}

/** Admits, records and settles like the engine does: Postgres first, then the counters. */
async function runRequest(guard: SpendGuard, store: Store, input: AdmissionInput, cost: number) {
  const reservation = await guard.admit(input);
  await store.generations.start({
    id: input.requestId,
    workspaceId: input.workspaceId,
    apiKeyId: input.keyId,
    model: "test/model",
    ingressFormat: "chat_completions",
    source: "api",
    stream: false,
    createdAt: new Date(reservation.admittedAt),
  });
  await store.generations.finish(input.requestId, {
    status: "ok",
    errorCode: null,
    upstreamProvider: "fake",
    upstreamModel: "fake",
    ...{
      tokensPrompt: 0,
      tokensCompletion: 100,
      tokensReasoning: 0,
      tokensCachedPrompt: 0,
      tokensCacheWrite: 0,
    },
    costMicroUsd: cost,
    toolCostsMicroUsd: {},
    latencyMs: 1,
    finishReason: "stop",
  });
  await reservation.settle(cost);
  return reservation;
}

// The runtime modes: embedded store with in-process counters, PostgreSQL with either
// (one instance without Redis, or several with it). PGlite with Redis counters is no runtime mode.
const COMBINATIONS = [
  ["embedded", "in-process"],
  ["postgres", "in-process"],
  ["postgres", "redis"],
] as const;

for (const [storageMode, counterMode] of COMBINATIONS) {
  test(`spend guard with ${counterMode} counters [${storageMode}]`, async (t) => {
    if (!(await requireMode(t, storageMode))) return;
    if (counterMode === "redis" && !(await requireMode(t, "redis"))) return;
    const { store, cleanup: cleanupStore } = await createTestStore(storageMode);
    const { counters, cleanup } = await openCounters(counterMode);
    const guard = createSpendGuard({ counters, keyLimits: store.keyLimits, leaseTtlMs: 60_000 });
    try {
      await t.test("200 concurrent admissions against a $0.05 total limit: exactly 50", async () => {
        const key = await createKey(store, { totalMicroUsd: 50_000 });
        const outcomes = await Promise.allSettled(
          Array.from({ length: 200 }, () => runRequest(guard, store, admission(key), 1_000)),
        );
        const admitted = outcomes.filter((outcome) => outcome.status === "fulfilled").length;
        const refused = outcomes.flatMap((outcome) =>
          outcome.status === "rejected" ? [outcome.reason] : [],
        );
        assert.equal(admitted, 50);
        assert.ok(
          refused.every((error) => error instanceof GatewayError && error.code === "key_limit_exceeded"),
        );
        assert.match(
          (refused[0] as Error).message,
          /total spend limit of \$0\.05 is reached\. It does not reset by itself/,
        );
        const spent = await store.keyLimits.sumSpend(key.keyId, {
          total: { since: new Date(0), until: null },
        });
        assert.equal(spent.total, 50_000);
        assert.deepEqual(await guard.readReserved(key.workspaceId, key.keyId), {
          keyMicroUsd: 0,
          workspaceMicroUsd: 0,
        });
      });

      await t.test("reservations larger than the cost are released by settlement", async () => {
        const key = await createKey(store, { dailyMicroUsd: 5_000 });
        for (let index = 0; index < 10; index++) await runRequest(guard, store, admission(key), 400);
        // 4000 spent; a 1000 reservation still fits, the next does not.
        await runRequest(guard, store, admission(key), 1_000);
        await assert.rejects(guard.admit(admission(key)), (error: GatewayError) => {
          assert.equal(error.code, "key_limit_exceeded");
          assert.match(
            error.message,
            /daily spend limit of \$0\.005 is reached\. It resets at \S+T00:00:00\.000Z/,
          );
          return true;
        });
      });

      await t.test(
        "no cap set: lowered to the headroom; explicit cap: refused with the numbers",
        async () => {
          const key = await createKey(store, { monthlyMicroUsd: 2_000 });
          await runRequest(guard, store, admission(key), 1_000);
          const lowered = await guard.admit(
            admission(key, {
              worstCase: estimateWorstCase(REQUEST, PRICES, 4_096, BOUNDS),
              outputCapAdjustable: true,
            }),
          );
          assert.equal(lowered.outputCapLowered, true);
          assert.equal(lowered.outputCap, 100); // 1000 µUSD left at 10 µUSD per output token
          assert.equal(lowered.amountMicroUsd, 1_000);
          await lowered.settle(0);
          await assert.rejects(
            guard.admit(admission(key, { worstCase: estimateWorstCase(REQUEST, PRICES, 4_096, BOUNDS) })),
            {
              code: "key_limit_exceeded",
              message:
                /monthly spend limit of \$0\.002 is nearly reached: \$0\.001 is left .* may cost up to \$0\.04096/,
            },
          );
          // 510 µUSD left affords 51 tokens, fewer than MIN_LOWERED_OUTPUT_TOKENS: refused even without a cap.
          await runRequest(
            guard,
            store,
            admission(key, { worstCase: estimateWorstCase(REQUEST, PRICES, 1, BOUNDS) }),
            490,
          );
          await assert.rejects(
            guard.admit(
              admission(key, {
                worstCase: estimateWorstCase(REQUEST, PRICES, 4_096, BOUNDS),
                outputCapAdjustable: true,
              }),
            ),
            { code: "key_limit_exceeded" },
          );
        },
      );

      await t.test("the balance: insufficient_credits; invoicing admits", async () => {
        const key = await createKey(store, {}, 1_500);
        await runRequest(guard, store, admission(key), 1_000);
        await assert.rejects(guard.admit(admission(key)), {
          code: "insufficient_credits",
          message: /available credit of \$0\.0005/,
        });
        const invoiced = await guard.admit(admission(key, { checkBalance: false }));
        await invoiced.settle(0);
      });

      await t.test("rate limit: rate_limit_exceeded with the wait until a slot frees", async () => {
        const key = await createKey(store, { requestsPerMinute: 3 });
        for (let index = 0; index < 3; index++) {
          await runRequest(guard, store, admission(key, { requestsPerMinute: 3 }), 10);
        }
        await assert.rejects(guard.admit(admission(key, { requestsPerMinute: 3 })), (error: GatewayError) => {
          assert.equal(error.code, "rate_limit_exceeded");
          assert.ok(
            error.retryAfterSeconds! >= 59 && error.retryAfterSeconds! <= 60,
            String(error.retryAfterSeconds),
          );
          assert.match(error.message, /allows 3 requests per minute/);
          return true;
        });
      });

      await t.test(
        "extensions hold more against the same limit, are refused at the headroom, and settle with the request",
        async () => {
          const key = await createKey(store, { dailyMicroUsd: 5_000, requestsPerMinute: 1 });
          const input = admission(key, { requestsPerMinute: 1 });
          const reservation = await guard.admit(input);
          assert.equal(reservation.amountMicroUsd, 1_000);
          // No rate slot is taken by an extension: the key allows one request per minute.
          assert.equal(await reservation.extend(2_500), true);
          assert.equal(reservation.amountMicroUsd, 3_500);
          assert.deepEqual(await guard.readReserved(key.workspaceId, key.keyId), {
            keyMicroUsd: 3_500,
            workspaceMicroUsd: 3_500,
          });
          // 1500 left: 2000 more is refused and changes nothing.
          assert.equal(await reservation.extend(2_000), false);
          assert.equal(reservation.amountMicroUsd, 3_500);
          await store.generations.start({
            id: input.requestId,
            workspaceId: key.workspaceId,
            apiKeyId: key.keyId,
            model: "test/model",
            ingressFormat: "chat_completions",
            source: "api",
            stream: false,
            createdAt: new Date(reservation.admittedAt),
          });
          await store.generations.finish(input.requestId, {
            status: "ok",
            errorCode: null,
            upstreamProvider: "fake",
            upstreamModel: "fake",
            tokensPrompt: 0,
            tokensCompletion: 300,
            tokensReasoning: 0,
            tokensCachedPrompt: 0,
            tokensCacheWrite: 0,
            costMicroUsd: 3_000,
            toolCostsMicroUsd: { web_search: 1_000 },
            latencyMs: 1,
            finishReason: "stop",
          });
          await reservation.settle(3_000);
          assert.deepEqual(await guard.readReserved(key.workspaceId, key.keyId), {
            keyMicroUsd: 0,
            workspaceMicroUsd: 0,
          });
          const spent = await store.keyLimits.sumSpend(key.keyId, {
            daily: { since: new Date(Date.now() - 86_400_000), until: null },
          });
          assert.equal(spent.daily, 3_000);
          // 2000 left of the day: a 1000 request fits, with 1000 more as an extension, then nothing.
          const next = await guard.admit(admission(key));
          assert.equal(await next.extend(1_000), true);
          assert.equal(await next.extend(1), false);
          await next.settle(0);
        },
      );

      await t.test(
        "admission answers with the headroom each limit and the balance leave after it",
        async () => {
          const key = await createKey(store, { dailyMicroUsd: 5_000, totalMicroUsd: 9_000 }, 20_000);
          const first = await guard.admit(admission(key));
          assert.deepEqual(first.headroom, { daily: 4_000, total: 8_000, balance: 19_000 });
          // Another in flight and one settled at 400: each window counts both.
          const second = await guard.admit(admission(key));
          assert.deepEqual(second.headroom, { daily: 3_000, total: 7_000, balance: 18_000 });
          await second.settle(0);
          await runRequest(guard, store, admission(key), 400);
          const third = await guard.admit(admission(key));
          assert.deepEqual(third.headroom, { daily: 2_600, total: 6_600, balance: 17_600 });
          // Lowered to what the headroom affords: what is left after the lowered amount.
          const lowered = await guard.admit(
            admission(key, {
              worstCase: estimateWorstCase(REQUEST, PRICES, 4_096, BOUNDS),
              outputCapAdjustable: true,
            }),
          );
          assert.equal(lowered.amountMicroUsd, 2_600);
          assert.deepEqual(lowered.headroom, { daily: 0, total: 4_000, balance: 15_000 });
          await Promise.all([first.settle(0), third.settle(0), lowered.settle(0)]);
          // Invoicing: no balance; no spend limit at all: nothing, whatever the balance.
          const invoiced = await guard.admit(admission(key, { checkBalance: false }));
          assert.deepEqual(invoiced.headroom, { daily: 3_600, total: 7_600 });
          await invoiced.settle(0);
          const unlimited = await guard.admit(admission(await createKey(store, {})));
          assert.equal(unlimited.headroom, undefined);
          await unlimited.settle(0);
        },
      );

      await t.test("credit changes reach the balance counter through forgetBalance", async () => {
        const key = await createKey(store, {}, 1_000);
        await runRequest(guard, store, admission(key), 1_000);
        await assert.rejects(guard.admit(admission(key)), { code: "insufficient_credits" });
        await store.workspaces.credit(key.workspaceId, 5_000);
        await guard.forgetBalance(key.workspaceId);
        await runRequest(guard, store, admission(key), 1_000);
      });
    } finally {
      await guard.close();
      await cleanup();
      await cleanupStore();
    }
  });
}

forEachStorageMode(
  "spend guard: an unreachable limit store refuses what needs a limit",
  async ({ store }) => {
    const broken: LimitCounters = {
      ...createInProcessLimitCounters(),
      mode: "redis",
      reserve: async () => {
        throw new Error("connect ECONNREFUSED");
      },
      settle: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    };
    const guard = createSpendGuard({ counters: broken, keyLimits: store.keyLimits, leaseTtlMs: 60_000 });
    const key = await createKey(store, {});
    await assert.rejects(guard.admit(admission(key)), (error: GatewayError) => {
      assert.equal(error.code, "rate_limit_exceeded");
      assert.equal(error.retryAfterSeconds, 5);
      assert.match(error.message, /limit store is unreachable/);
      return true;
    });
    await assert.rejects(guard.admit(admission(key, { checkBalance: false, requestsPerMinute: 10 })), {
      code: "rate_limit_exceeded",
    });
    // Invoicing, no key limit, no rate limit: nothing to enforce, so it is admitted.
    const detached = await guard.admit(admission(key, { checkBalance: false }));
    await detached.settle(1_000);
    await guard.close();
  },
);

test("spend guard: Redis lost its memory; both instances re-publish the reservations they hold before anything more is admitted, and settle them once", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { store, cleanup: cleanupStore } = await createTestStore("postgres");
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const openGuard = async () =>
    createSpendGuard({
      counters: createRedisLimitCounters(await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix })),
      keyLimits: store.keyLimits,
      leaseTtlMs: 60_000,
      recoveryMs: 400,
      epochCheckIntervalMs: 50,
    });
  const [first, second] = [await openGuard(), await openGuard()];
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  const wipe = async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  };
  try {
    const key = await createKey(store, { totalMicroUsd: 5_000 });
    // Five requests of 1,000 in flight hold the whole limit: three here, two there.
    const held = await Promise.all(
      [first, first, first, second, second].map((guard) => guard.admit(admission(key))),
    );
    await assert.rejects(first.admit(admission(key)), { code: "key_limit_exceeded" });

    await wipe(); // Restarted empty.
    // The first admission after the loss waits for the recovery; by then both re-published.
    await assert.rejects(second.admit(admission(key)), { code: "key_limit_exceeded" });
    assert.deepEqual(await first.readReserved(key.workspaceId, key.keyId), {
      keyMicroUsd: 5_000,
      workspaceMicroUsd: 5_000,
    });

    // Two settle for 600 (Postgres first, as the engine does), three release: 1,200 spent.
    for (const [index, reservation] of held.entries()) {
      const cost = index < 2 ? 600 : 0;
      if (cost > 0) await recordFinal(store, key, reservation.admittedAt, cost);
      await reservation.settle(cost);
    }
    assert.deepEqual(await second.readReserved(key.workspaceId, key.keyId), {
      keyMicroUsd: 0,
      workspaceMicroUsd: 0,
    });
    // 5,000 − 1,200 left: three more of 1,000 fit, the fourth does not.
    const more = await Promise.allSettled(
      Array.from({ length: 4 }, (_, index) => [first, second][index % 2].admit(admission(key))),
    );
    assert.equal(more.filter((outcome) => outcome.status === "fulfilled").length, 3);
  } finally {
    redis.disconnect();
    await first.close();
    await second.close();
    await wipe().catch(() => {});
    await cleanupStore();
  }
});

/** A final record of `cost` for the key, as settlement writes it before the counters. */
async function recordFinal(
  store: Store,
  key: Awaited<ReturnType<typeof createKey>>,
  admittedAt: number,
  cost: number,
): Promise<void> {
  const id = `req_${randomBytes(6).toString("hex")}`;
  await store.generations.finish(
    id,
    {
      status: "ok",
      errorCode: null,
      upstreamProvider: "fake",
      upstreamModel: "fake",
      tokensPrompt: 0,
      tokensCompletion: 100,
      tokensReasoning: 0,
      tokensCachedPrompt: 0,
      tokensCacheWrite: 0,
      costMicroUsd: cost,
      toolCostsMicroUsd: {},
      latencyMs: 1,
      finishReason: "stop",
    },
    {
      id,
      workspaceId: key.workspaceId,
      apiKeyId: key.keyId,
      model: "test/model",
      ingressFormat: "chat_completions",
      source: "api",
      stream: false,
      createdAt: new Date(admittedAt),
    },
  );
}

test("spend guard: the settle observer hears each request once, with its cost, not its extensions", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { store, cleanup: cleanupStore } = await createTestStore("embedded");
  const { counters, cleanup } = await openCounters("in-process");
  const heard: Array<{ requestId: string; cost: number }> = [];
  const guard = createSpendGuard({
    counters,
    keyLimits: store.keyLimits,
    leaseTtlMs: 60_000,
    onSettled: (input, _admittedAt, cost) => heard.push({ requestId: input.requestId, cost }),
  });
  try {
    const key = await createKey(store, { totalMicroUsd: 100_000 });
    const input = admission(key);
    const reservation = await guard.admit(input);
    assert.equal(await reservation.extend(2_000), true);
    assert.equal(await reservation.extend(3_000), true);
    assert.deepEqual(heard, [], "nothing before the settlement");
    await reservation.settle(1_234);
    await reservation.settle(1_234);
    assert.deepEqual(heard, [{ requestId: input.requestId, cost: 1_234 }]);
  } finally {
    await guard.close();
    await cleanup();
    await cleanupStore();
  }
});

forEachStorageMode(
  "spend guard: a settlement of the crash sweep (settleOrphan) is heard with the key's limits",
  async ({ store }) => {
    const { counters, cleanup } = await openCounters("in-process");
    const heard: Array<{ requestId: string; limits: KeyLimits; admittedAt: number; cost: number }> = [];
    const guard = createSpendGuard({
      counters,
      keyLimits: store.keyLimits,
      leaseTtlMs: 60_000,
      onSettled: (key, admittedAt, cost) =>
        heard.push({ requestId: key.requestId, limits: key.limits, admittedAt, cost }),
    });
    try {
      const key = await createKey(store, { dailyMicroUsd: 7_000 });
      const input = admission(key);
      const reservation = await guard.admit(input);
      // Its instance died: the sweep settles the record, then the reservation.
      const admittedAt = new Date(reservation.admittedAt);
      await guard.settleOrphan({
        requestId: input.requestId,
        keyId: key.keyId,
        workspaceId: key.workspaceId,
        admittedAt,
        costMicroUsd: 321,
      });
      assert.equal(heard.length, 1);
      assert.deepEqual(
        { requestId: heard[0].requestId, daily: heard[0].limits.dailyMicroUsd, at: heard[0].admittedAt },
        { requestId: input.requestId, daily: 7_000, at: admittedAt.getTime() },
      );
      assert.equal(heard[0].cost, 321);
      assert.deepEqual(await guard.readReserved(key.workspaceId, key.keyId), {
        keyMicroUsd: 0,
        workspaceMicroUsd: 0,
      });
      // A key that no longer exists: nothing to check against, nothing heard.
      await guard.settleOrphan({
        requestId: "gen-of-a-deleted-key",
        keyId: "key_gone",
        workspaceId: key.workspaceId,
        admittedAt,
        costMicroUsd: 5,
      });
      assert.equal(heard.length, 1);
    } finally {
      await guard.close();
      await cleanup();
    }
  },
);
