import assert from "node:assert/strict";
import { createTestOutcome } from "../../../test/helpers/generation-records.js";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import type { GenerationOutcome } from "../../engine/generation-record.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Store } from "../store.js";

function outcome(costMicroUsd: number): GenerationOutcome {
  return createTestOutcome({ costMicroUsd });
}

async function addGeneration(
  store: Store,
  key: { id: string; workspaceId: string },
  id: string,
  createdAt: string,
  cost: number | null,
) {
  await store.generations.start({
    id,
    workspaceId: key.workspaceId,
    apiKeyId: key.id,
    model: "a/b",
    ingressFormat: "chat_completions",
    source: "api",
    stream: false,
    createdAt: new Date(createdAt),
  });
  if (cost !== null) await store.generations.finish(id, outcome(cost));
}

forEachStorageMode("key limits: set at creation, updated field by field, audit-logged", async ({ store }) => {
  const workspace = await store.workspaces.create({ name: "w", creditsMicroUsd: 0, invoicing: false });
  const { key } = await store.apiKeys.create({
    workspaceId: workspace.id,
    limits: { dailyMicroUsd: 5_000_000, totalMicroUsd: 0, requestsPerMinute: 60 },
  });
  assert.deepEqual(await store.keyLimits.get(key.id), {
    dailyMicroUsd: 5_000_000,
    monthlyMicroUsd: null,
    totalMicroUsd: 0,
    requestsPerMinute: 60,
    totalResetAt: null,
  });

  const updated = await store.keyLimits.update(
    key.id,
    { dailyMicroUsd: null, monthlyMicroUsd: 9_007_199_254_740_991, allowedModels: ["a/b"] },
    "alice",
  );
  assert.deepEqual(updated.limits, {
    dailyMicroUsd: null,
    monthlyMicroUsd: 9_007_199_254_740_991,
    totalMicroUsd: 0,
    requestsPerMinute: 60,
    totalResetAt: null,
  });
  assert.deepEqual(updated.key.allowedModels, ["a/b"]);
  const admission = await store.keyLimits.readAdmission(key.id);
  assert.equal(admission?.workspace.id, workspace.id);
  assert.deepEqual(admission?.allowedModels, ["a/b"]);
  assert.deepEqual(admission?.limits, updated.limits);

  const [entry] = await store.keyLimits.listAudit({ apiKeyId: key.id });
  assert.equal(entry.action, "key.limits_updated");
  assert.equal(entry.actor, "alice");
  assert.equal(entry.workspaceId, workspace.id);
  assert.deepEqual(entry.details, {
    before: {
      daily_limit_micro_usd: "5000000",
      monthly_limit_micro_usd: null,
      total_limit_micro_usd: "0",
      requests_per_minute: 60,
      models: null,
    },
    after: {
      daily_limit_micro_usd: null,
      monthly_limit_micro_usd: "9007199254740991",
      total_limit_micro_usd: "0",
      requests_per_minute: 60,
      models: ["a/b"],
    },
  });

  await assert.rejects(
    store.keyLimits.update("key_missing", { dailyMicroUsd: 1 }, "alice"),
    (error) => error instanceof GatewayError && /Unknown API key/.test(error.message),
  );
  await assert.rejects(
    store.keyLimits.update(key.id, { dailyMicroUsd: -1 }, "alice"),
    /must not be negative/,
  );
  assert.equal(await store.keyLimits.get("key_missing"), null);
});

forEachStorageMode("key spend: window sums, total reset with audit, seed snapshot", async ({ store }) => {
  const workspace = await store.workspaces.create({ name: "w", creditsMicroUsd: 100_000, invoicing: false });
  const { key } = await store.apiKeys.create({
    workspaceId: workspace.id,
    limits: { totalMicroUsd: 50_000 },
  });
  const other = (await store.apiKeys.create({ workspaceId: workspace.id })).key;
  await addGeneration(store, key, "g1", "2026-04-30T23:59:59.999Z", 1_000); // previous month
  await addGeneration(store, key, "g2", "2026-05-20T12:00:00.000Z", 2_000); // this month
  await addGeneration(store, key, "g3", "2026-05-21T00:00:00.000Z", 4_000); // today
  await addGeneration(store, key, "g4", "2026-05-21T09:00:00.000Z", null); // in flight
  await addGeneration(store, other, "g5", "2026-05-21T09:00:00.000Z", 8_000); // another key

  const windows = {
    daily: { since: new Date("2026-05-21T00:00:00Z"), until: new Date("2026-05-22T00:00:00Z") },
    monthly: { since: new Date("2026-05-01T00:00:00Z"), until: new Date("2026-06-01T00:00:00Z") },
    total: { since: new Date(0), until: null },
  };
  assert.deepEqual(await store.keyLimits.sumSpend(key.id, windows), {
    daily: 4_000,
    monthly: 6_000,
    total: 7_000,
  });

  const snapshot = await store.keyLimits.readSeedSnapshot({
    keyId: key.id,
    workspaceId: workspace.id,
    windows: { daily: windows.daily },
    generationIds: ["g3", "g4", "g5", "unknown"],
  });
  assert.deepEqual(snapshot.spendMicroUsd, { daily: 4_000 });
  assert.equal(snapshot.balanceMicroUsd, 100_000 - 15_000);
  assert.deepEqual(
    snapshot.finished
      .map((entry) => [entry.id, entry.apiKeyId, entry.costMicroUsd, entry.createdAt.toISOString()])
      .sort(),
    [
      ["g3", key.id, 4_000, "2026-05-21T00:00:00.000Z"],
      ["g5", other.id, 8_000, "2026-05-21T09:00:00.000Z"],
    ],
  );
  const balanceOnly = await store.keyLimits.readSeedSnapshot({
    keyId: key.id,
    workspaceId: workspace.id,
    windows: {},
    generationIds: [],
  });
  assert.deepEqual(balanceOnly, { spendMicroUsd: {}, balanceMicroUsd: 85_000, finished: [] });

  const reset = await store.keyLimits.resetTotal(key.id, {
    actor: "bob",
    at: new Date("2026-05-21T10:00:00Z"),
  });
  assert.equal(reset.previousSpendMicroUsd, 7_000);
  assert.equal(reset.resetAt.toISOString(), "2026-05-21T10:00:00.000Z");
  assert.deepEqual(reset.limits.totalResetAt, reset.resetAt);
  const [entry] = await store.keyLimits.listAudit({ apiKeyId: key.id });
  assert.deepEqual([entry.action, entry.actor], ["key.total_reset", "bob"]);
  assert.equal(entry.details.previous_total_spend_micro_usd, "7000");
  assert.equal(entry.details.total_limit_micro_usd, "50000");

  await addGeneration(store, key, "g6", "2026-05-21T11:00:00.000Z", 500);
  const spent = await store.keyLimits.sumSpend(key.id, { total: { since: reset.resetAt, until: null } });
  assert.equal(spent.total, 500);
  const second = await store.keyLimits.resetTotal(key.id, { actor: "carol" });
  assert.equal(second.previousSpendMicroUsd, 500);
  assert.ok(second.resetAt > reset.resetAt);
  assert.equal((await store.keyLimits.listAudit({ apiKeyId: key.id })).length, 2);
});
