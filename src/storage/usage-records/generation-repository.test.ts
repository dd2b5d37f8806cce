import assert from "node:assert/strict";
import { createTestOutcome } from "../../../test/helpers/generation-records.js";
import { forEachStorageMode, type TestStore } from "../../../test/helpers/storage-modes.js";
import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import { createGenerationRepository } from "./generation-repository.js";

function createOutcome(overrides: Partial<GenerationOutcome> = {}): GenerationOutcome {
  return createTestOutcome({
    upstreamProvider: "openai",
    upstreamModel: "gpt-4o-2024-08-06",
    tokensPrompt: 120,
    tokensCompletion: 30,
    tokensReasoning: 5,
    tokensCachedPrompt: 100,
    costMicroUsd: 1_234,
    toolCostsMicroUsd: { web_search: 1_000 },
    latencyMs: 850,
    ...overrides,
  });
}

async function startGeneration({ store }: TestStore, credits = 1_000_000) {
  const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: credits, invoicing: false });
  const { key } = await store.apiKeys.create({ workspaceId: workspace.id });
  const start: GenerationStart = {
    id: `req_${Math.random().toString(36).slice(2)}`,
    workspaceId: workspace.id,
    apiKeyId: key.id,
    model: "openai/gpt-4o",
    ingressFormat: "chat_completions",
    source: "api",
    stream: true,
  };
  await store.generations.start(start);
  return { workspace, start };
}

async function countUsageEntries(context: TestStore, generationId: string): Promise<number> {
  const rows = await context.sql.query("SELECT 1 FROM ledger_entries WHERE generation_id = $1", [
    generationId,
  ]);
  return rows.length;
}

forEachStorageMode("generation start records an in-progress generation, idempotently", async (context) => {
  const { workspace, start } = await startGeneration(context);
  await context.store.generations.start({ ...start, model: "other/model" });
  const record = await context.store.generations.get(start.id, workspace.id);
  assert.ok(record);
  assert.equal(record.status, "in_progress");
  assert.equal(record.model, "openai/gpt-4o", "a repeated start does not overwrite");
  assert.equal(record.stream, true);
  assert.equal(record.ingressFormat, "chat_completions");
  assert.equal(record.finishedAt, null);
  assert.equal(record.costMicroUsd, 0);
  assert.ok(record.createdAt instanceof Date);
});

forEachStorageMode("finish debits the balance exactly once, even when called twice", async (context) => {
  const { workspace, start } = await startGeneration(context, 1_000_000);
  await context.store.generations.finish(start.id, createOutcome());
  await context.store.generations.finish(start.id, createOutcome({ costMicroUsd: 999_999, status: "error" }));

  assert.equal((await context.store.workspaces.get(workspace.id))?.balanceMicroUsd, 1_000_000 - 1_234);
  assert.equal(await countUsageEntries(context, start.id), 1);
  const record = await context.store.generations.get(start.id, workspace.id);
  assert.ok(record);
  assert.equal(record.status, "ok");
  assert.equal(record.costMicroUsd, 1_234);
  assert.deepEqual(record.toolCostsMicroUsd, { web_search: 1_000 });
  assert.equal(record.tokensPrompt, 120);
  assert.equal(record.tokensCompletion, 30);
  assert.equal(record.tokensReasoning, 5);
  assert.equal(record.tokensCachedPrompt, 100);
  assert.equal(record.tokensCacheWrite, 0);
  assert.equal(record.latencyMs, 850);
  assert.equal(record.finishReason, "stop");
  assert.equal(record.upstreamProvider, "openai");
  assert.equal(record.upstreamModel, "gpt-4o-2024-08-06");
  assert.equal(record.errorCode, null);
  assert.ok(record.finishedAt instanceof Date);

  const [usage] = await context.sql.query<{ amount_micro_usd: unknown; kind: string }>(
    "SELECT amount_micro_usd, kind FROM ledger_entries WHERE generation_id = $1",
    [start.id],
  );
  assert.equal(usage.kind, "usage");
  assert.equal(Number(usage.amount_micro_usd), -1_234);
});

forEachStorageMode("concurrent finishes debit once", async (context) => {
  const { workspace, start } = await startGeneration(context, 50_000_000);
  await Promise.all(
    Array.from({ length: 8 }, (_, index) =>
      context.store.generations.finish(start.id, createOutcome({ costMicroUsd: 1_000_000 + index })),
    ),
  );
  const balance = (await context.store.workspaces.get(workspace.id))?.balanceMicroUsd ?? 0;
  const cost = (await context.store.generations.get(start.id, workspace.id))?.costMicroUsd ?? 0;
  assert.ok(cost >= 1_000_000 && cost < 1_000_008);
  assert.equal(balance, 50_000_000 - cost);
  assert.equal(await countUsageEntries(context, start.id), 1);
});

forEachStorageMode("ledger sums equal balances; zero cost writes no entry", async (context) => {
  const { workspace, start } = await startGeneration(context, 3_000_000_000);
  await context.store.generations.finish(
    start.id,
    createOutcome({ costMicroUsd: 2_500_000_000, toolCostsMicroUsd: {} }),
  );
  const other = { ...start, id: `${start.id}_free` };
  await context.store.generations.start(other);
  await context.store.generations.finish(
    other.id,
    createOutcome({
      status: "error",
      errorCode: "provider_unavailable",
      costMicroUsd: 0,
      toolCostsMicroUsd: {},
    }),
  );
  assert.equal(await countUsageEntries(context, other.id), 0);
  const failed = await context.store.generations.get(other.id, workspace.id);
  assert.equal(failed?.status, "error");
  assert.equal(failed?.errorCode, "provider_unavailable");

  const [sum] = await context.sql.query<{ total: unknown }>(
    "SELECT sum(amount_micro_usd) AS total FROM ledger_entries WHERE workspace_id = $1",
    [workspace.id],
  );
  const balance = (await context.store.workspaces.get(workspace.id))?.balanceMicroUsd;
  assert.equal(balance, 500_000_000);
  assert.equal(Number(sum.total), balance);
});

forEachStorageMode("get hides other workspaces' generations and unknown ids", async (context) => {
  const { start } = await startGeneration(context);
  const stranger = await context.store.workspaces.create({ name: "S", creditsMicroUsd: 0, invoicing: false });
  assert.equal(await context.store.generations.get(start.id, stranger.id), null);
  assert.equal(await context.store.generations.get("req_missing", start.workspaceId), null);
});

forEachStorageMode("finish refuses unknown generations and invalid outcomes", async (context) => {
  const { start, workspace } = await startGeneration(context);
  await assert.rejects(
    context.store.generations.finish("req_never_started", createOutcome()),
    /never started/,
  );
  await assert.rejects(
    context.store.generations.finish(start.id, createOutcome({ costMicroUsd: -1 })),
    RangeError,
  );
  await assert.rejects(
    context.store.generations.finish(start.id, createOutcome({ costMicroUsd: 0.5 })),
    RangeError,
  );
  assert.equal((await context.store.generations.get(start.id, workspace.id))?.status, "in_progress");
});

forEachStorageMode(
  "finish with its start writes the record final without an in-progress row",
  async (context) => {
    const workspace = await context.store.workspaces.create({
      name: "W",
      creditsMicroUsd: 1_000_000,
      invoicing: false,
    });
    const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
    const start: GenerationStart = {
      id: `req_final_${Math.random().toString(36).slice(2)}`,
      workspaceId: workspace.id,
      apiKeyId: key.id,
      model: "openai/gpt-4o",
      ingressFormat: "responses",
      source: "api",
      stream: false,
      createdAt: new Date("2026-11-01T10:00:00.000Z"),
    };
    await context.store.generations.finish(start.id, createOutcome(), start);
    // Repeated, and a late start (a streamed record's in-progress write losing the race): no-ops.
    await context.store.generations.finish(start.id, createOutcome({ costMicroUsd: 99 }), start);
    await context.store.generations.start(start);
    const record = await context.store.generations.get(start.id, workspace.id);
    assert.equal(record?.status, "ok");
    assert.equal(record?.costMicroUsd, 1_234);
    assert.equal(record?.ingressFormat, "responses");
    assert.equal(record?.stream, false);
    assert.equal(record?.createdAt.toISOString(), "2026-11-01T10:00:00.000Z");
    assert.equal((await context.store.workspaces.get(workspace.id))?.balanceMicroUsd, 1_000_000 - 1_234);
    assert.equal(await countUsageEntries(context, start.id), 1);
  },
);

forEachStorageMode(
  "many concurrent finishes (group commit) debit every workspace by exactly its records",
  async (context) => {
    const workspaces = await Promise.all(
      [0, 1, 2].map((index) =>
        context.store.workspaces.create({ name: `W${index}`, creditsMicroUsd: 10_000_000, invoicing: false }),
      ),
    );
    const keys = await Promise.all(
      workspaces.map((workspace) => context.store.apiKeys.create({ workspaceId: workspace.id })),
    );
    const entries = Array.from({ length: 120 }, (_, index) => {
      const owner = index % 3;
      const start: GenerationStart = {
        id: `req_many_${index}_${Math.random().toString(36).slice(2)}`,
        workspaceId: workspaces[owner].id,
        apiKeyId: keys[owner].key.id,
        model: "openai/gpt-4o",
        ingressFormat: "chat_completions",
        source: "api",
        stream: index % 2 === 0,
      };
      return { start, cost: 1_000 + index };
    });
    // Half were started (streams), half not; one finish is repeated; one outcome is invalid.
    await Promise.all(
      entries
        .filter((entry) => entry.start.stream)
        .map((entry) => context.store.generations.start(entry.start)),
    );
    const results = await Promise.allSettled([
      ...entries.map(({ start, cost }) =>
        context.store.generations.finish(start.id, createOutcome({ costMicroUsd: cost }), start),
      ),
      context.store.generations.finish(
        entries[0].start.id,
        createOutcome({ costMicroUsd: 7 }),
        entries[0].start,
      ),
      context.store.generations.finish("req_invalid", createOutcome({ costMicroUsd: -5 }), {
        ...entries[1].start,
        id: "req_invalid",
      }),
    ]);
    assert.deepEqual(
      results.map((result) => result.status).filter((status) => status === "rejected"),
      ["rejected"],
      "only the invalid outcome fails",
    );
    for (const [owner, workspace] of workspaces.entries()) {
      const spent = entries
        .filter((_, index) => index % 3 === owner)
        .reduce((sum, entry) => sum + entry.cost, 0);
      assert.equal((await context.store.workspaces.get(workspace.id))?.balanceMicroUsd, 10_000_000 - spent);
      const [sum] = await context.sql.query<{ total: unknown; count: unknown }>(
        "SELECT sum(amount_micro_usd) AS total, count(*) AS count FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'",
        [workspace.id],
      );
      assert.equal(Number(sum.total), -spent);
      assert.equal(Number(sum.count), 40);
    }
    assert.equal(
      (await context.store.generations.get(entries[0].start.id, workspaces[0].id))?.costMicroUsd,
      1_000,
    );
  },
);

forEachStorageMode(
  "a batch of final records stores every field of each start and outcome as given",
  async (context) => {
    const { workspace, start } = await startGeneration(context);
    const repository = createGenerationRepository(context.sql);
    const streamed = { ...start, id: `${start.id}_streamed`, sessionId: "sess-1", client: "claude-cli" };
    await context.store.generations.start(streamed);
    const whole: GenerationStart = {
      ...start,
      id: `${start.id}_whole`,
      ingressFormat: "anthropic_messages",
      source: "playground",
      stream: false,
      createdAt: new Date("2026-11-02T03:04:05.678Z"),
      estimatedInputTokens: 40,
      instanceId: "inst_not_a_column",
    };
    const failed = createOutcome({
      status: "error",
      errorCode: "provider_unavailable",
      upstreamProvider: null,
      upstreamModel: null,
      tokensPrompt: 0,
      tokensCompletion: 0,
      tokensReasoning: 0,
      tokensCachedPrompt: 0,
      costMicroUsd: 0,
      toolCostsMicroUsd: {},
      finishReason: null,
      attempts: [],
    });
    const cached = createOutcome({
      tokensCacheWrite: 7,
      usageEstimated: true,
      cacheHit: true,
      finishReason: "length",
    });
    await repository.finishMany([
      { id: streamed.id, start: streamed, outcome: cached },
      { id: whole.id, start: whole, outcome: failed, finishedAt: new Date("2026-11-02T03:04:06.000Z") },
    ]);

    const first = await context.store.generations.get(streamed.id, workspace.id);
    assert.ok(first);
    const { createdAt, finishedAt, ...rest } = first;
    assert.deepEqual(rest, {
      ...streamed,
      ...cached,
      status: "ok",
    });
    assert.ok(createdAt.getTime() <= finishedAt!.getTime() && finishedAt!.getTime() <= Date.now());

    const second = await context.store.generations.get(whole.id, workspace.id);
    // Not columns of a final row: the instance, and the prompt estimate only an interrupted record needs.
    const { instanceId: _instance, estimatedInputTokens: _estimate, ...wholeColumns } = whole;
    const { attempts: _none, ...failedColumns } = failed;
    assert.deepEqual(second, {
      ...wholeColumns,
      ...failedColumns,
      status: "error",
      usageEstimated: false,
      finishedAt: new Date("2026-11-02T03:04:06.000Z"),
    });
    assert.equal(await countUsageEntries(context, whole.id), 0, "nothing to debit");
    assert.equal(
      (await context.store.workspaces.get(workspace.id))?.balanceMicroUsd,
      1_000_000 - cached.costMicroUsd,
    );
  },
);

forEachStorageMode(
  "a final record keeps its attempts, written with or without its start",
  async (context) => {
    const attempts = [
      { provider: "a", model: "m/one", upstreamModel: "one", outcome: "provider_unavailable", latencyMs: 12 },
      { provider: "b", model: "m/one", upstreamModel: "one-b", outcome: "ok", latencyMs: 340 },
    ];
    const { workspace, start } = await startGeneration(context);
    await context.store.generations.finish(start.id, createOutcome({ attempts }));
    assert.deepEqual((await context.store.generations.get(start.id, workspace.id))?.attempts, attempts);

    const other = { ...start, id: `${start.id}_written_whole` };
    await context.store.generations.finish(other.id, createOutcome({ attempts }), other);
    assert.deepEqual((await context.store.generations.get(other.id, workspace.id))?.attempts, attempts);

    const none = { ...start, id: `${start.id}_without` };
    await context.store.generations.finish(none.id, createOutcome(), none);
    assert.equal((await context.store.generations.get(none.id, workspace.id))?.attempts, undefined);
  },
);

forEachStorageMode(
  "attempts naming a caller's NUL or lone surrogate are stored with U+FFFD, with the rest of their batch",
  async (context) => {
    // PostgreSQL's jsonb refuses both characters, and one refused value failed the whole batch.
    const attempt = { provider: "a", model: "m/one", upstreamModel: "one", outcome: "ok", latencyMs: 3 };
    const { workspace, start } = await startGeneration(context);
    const entries = ["\udc00", "\u0000", "x\ud83d", "\ud83d\ude00"].map((type, index) => ({
      id: `${start.id}_${index}`,
      start: { ...start, id: `${start.id}_${index}` },
      outcome: createOutcome({ attempts: [{ ...attempt, dropped: [`tools[0](${type})`] }] }),
    }));
    await Promise.all(
      entries.map((entry) => context.store.generations.finish(entry.id, entry.outcome, entry.start)),
    );
    const stored = await Promise.all(
      entries.map(async (entry) => (await context.store.generations.get(entry.id, workspace.id))?.attempts),
    );
    assert.deepEqual(
      stored.map((attempts) => attempts?.[0].dropped),
      [["tools[0](\ufffd)"], ["tools[0](\ufffd)"], ["tools[0](x\ufffd)"], ["tools[0](\ud83d\ude00)"]],
    );
  },
);

forEachStorageMode(
  "the Messages format is stored as anthropic_messages; a row written before the rename reads the same",
  async (context) => {
    const { workspace, start } = await startGeneration(context);
    const messages = { ...start, id: `${start.id}_m`, ingressFormat: "anthropic_messages" as const };
    await context.store.generations.start(messages);
    assert.equal(
      (await context.store.generations.get(messages.id, workspace.id))?.ingressFormat,
      "anthropic_messages",
    );
    // An instance of the previous version still writes the old value during a rolling upgrade.
    await context.sql.query("UPDATE generations SET ingress_format = 'vendor_messages' WHERE id = $1", [
      start.id,
    ]);
    assert.equal(
      (await context.store.generations.get(start.id, workspace.id))?.ingressFormat,
      "anthropic_messages",
    );
  },
);
