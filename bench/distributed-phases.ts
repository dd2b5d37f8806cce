/**
 * Where a distributed request's added latency goes: times each storage step of the request path
 * on its own, at a fixed rate (default 400/s), against the PostgreSQL and Redis of the test suite
 * (a fresh database and a random key prefix, both removed at the end):
 *
 *   admit        Redis: the reservation script (spend and rate limits)
 *   start_pg     PostgreSQL: a stream's in-progress row (group commit), what headers waited for
 *   start_redis  Redis: the same record shared with SET (what headers wait for now)
 *   finish_pg    PostgreSQL: the final row, ledger line and debit (group commit)
 *   settle_redis Redis: the reservation replaced by the actual cost
 *
 *   node --import tsx bench/distributed-phases.ts [--rate 400] [--count 3000]
 *
 * Pin it like the gateway (`taskset -c 0`) to see what the gateway's core sees. Figures and their
 * reading are in docs/performance.md.
 */
import { parseArgs } from "node:util";
import { openSpendGuard } from "../src/storage/open-spend-guard.js";
import { createDurableGenerationRepository } from "../src/storage/usage-records/distributed-recorder.js";
import { createMemoryOutcomeOutbox } from "../src/storage/usage-records/outcome-outbox.js";
import { createTestOutcome, createTestStart } from "../test/helpers/generation-records.js";
import { createTestSharedState, createTestStore, TEST_REDIS_URL } from "../test/helpers/storage-modes.js";

const { values } = parseArgs({ options: { rate: { type: "string" }, count: { type: "string" } } });
const rate = Number(values.rate ?? 400);
const count = Number(values.count ?? 3000);
const WARMUP = 200;

const context = await createTestStore("postgres");
// A random key prefix, every key under it deleted at the end.
const shared = await createTestSharedState("redis");
const { state, prefix } = shared;
const guard = await openSpendGuard({
  keyLimits: context.store.keyLimits,
  redisUrl: TEST_REDIS_URL,
  prefix,
  leaseTtlMs: 60_000,
  state,
});
const generations = createDurableGenerationRepository(context.store.generations, {
  outbox: createMemoryOutcomeOutbox(),
  ping: () => context.store.ping(),
});
try {
  const workspace = await context.store.workspaces.create({
    name: "phases",
    creditsMicroUsd: 1_000_000_000,
    invoicing: true,
  });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const phases: Record<string, number[]> = {
    admit: [],
    start_pg: [],
    start_redis: [],
    finish_pg: [],
    settle_redis: [],
  };
  const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
  const timed = async <T>(phase: string, step: () => Promise<T>): Promise<T> => {
    const startedAt = performance.now();
    const result = await step();
    phases[phase].push(performance.now() - startedAt);
    return result;
  };
  const limits = {
    dailyMicroUsd: null,
    monthlyMicroUsd: null,
    totalMicroUsd: null,
    requestsPerMinute: null,
    totalResetAt: null,
  };
  const runOne = async (index: number) => {
    const id = `req_phase_${index}`;
    const reservation = await timed("admit", () =>
      guard.admit({
        requestId: id,
        keyId: key.id,
        workspaceId: workspace.id,
        limits,
        requestsPerMinute: 1_000_000,
        checkBalance: false,
        worstCase: {
          inputTokens: 10,
          inputPicoUsd: 1000n,
          inputTokenPicoUsd: 100n,
          outputTokenPicoUsd: 1000n,
          outputCap: 100,
          amountMicroUsd: 10,
        },
        outputCapAdjustable: false,
      }),
    );
    const start = createTestStart(
      { id, workspaceId: workspace.id, apiKeyId: key.id },
      { stream: true, createdAt: new Date(reservation.admittedAt) },
    );
    // Alternating, so both ways of making a stream's record visible see the same moments.
    if (index % 2 === 0) await timed("start_pg", () => generations.start(start));
    else {
      await timed("start_redis", () =>
        state.setValue(`gen-in-progress:${id}`, JSON.stringify({ start, at: new Date() }), 60_000),
      );
    }
    await sleep(1); // The upstream call.
    await timed("finish_pg", () => generations.finish(id, createTestOutcome({ costMicroUsd: 5 }), start));
    await timed("settle_redis", () => reservation.settle(5));
  };
  const running: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    running.push(runOne(index));
    await sleep(1000 / rate);
  }
  await Promise.all(running);
  console.log(`${count} requests at ${rate}/s (first ${WARMUP} left out), ms:`);
  for (const [phase, list] of Object.entries(phases)) {
    const sorted = list.slice(WARMUP / (phase.startsWith("start") ? 2 : 1)).sort((a, b) => a - b);
    const at = (quantile: number) => sorted[Math.floor(sorted.length * quantile)].toFixed(3);
    console.log(`  ${phase.padEnd(13)} p50 ${at(0.5)}  p90 ${at(0.9)}  p99 ${at(0.99)}`);
  }
} finally {
  await guard.close();
  await shared.cleanup();
  await context.cleanup();
}
