import { Redis } from "ioredis";
import { openSpendGuard } from "../src/storage/open-spend-guard.js";
import { createTestSharedState, createTestStore, TEST_REDIS_URL } from "../test/helpers/storage-modes.js";
const context = await createTestStore("postgres");
const shared = await createTestSharedState("redis");
const guard = await openSpendGuard({ keyLimits: context.store.keyLimits, redisUrl: TEST_REDIS_URL, prefix: shared.prefix, leaseTtlMs: 60_000, state: shared.state });
const admin = new Redis(TEST_REDIS_URL);
try {
  const workspace = await context.store.workspaces.create({ name: "p", creditsMicroUsd: 1_000_000_000, invoicing: false });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const limits = { dailyMicroUsd: 1_000_000_000, monthlyMicroUsd: null, totalMicroUsd: null, requestsPerMinute: null, totalResetAt: null };
  const admitOne = (i: number) => guard.admit({ requestId: `r${i}`, keyId: key.id, workspaceId: workspace.id, limits, requestsPerMinute: 1_000_000, checkBalance: true,
      worstCase: { inputTokens: 10, inputPicoUsd: 1000n, inputTokenPicoUsd: 100n, outputTokenPicoUsd: 1000n, outputCap: 100, amountMicroUsd: 10 }, outputCapAdjustable: false });
  for (let i = 0; i < 200; i++) await (await admitOne(i)).settle(5);
  await admin.config("RESETSTAT");
  const lat: number[] = [];
  const held = [];
  for (let i = 200; i < 2200; i++) { const t = performance.now(); held.push(await admitOne(i)); lat.push(performance.now() - t); await new Promise((r) => setTimeout(r, 2)); }
  console.log((await admin.info("commandstats")).split("\n").filter((l) => l.includes("eval")).join("\n"));
  lat.sort((a, b) => a - b);
  console.log("admit p50", lat[1000].toFixed(3), "p90", lat[1800].toFixed(3));
  for (const h of held) await h.settle(5);
} finally { admin.disconnect(); await guard.close(); await shared.cleanup(); await context.cleanup(); }
