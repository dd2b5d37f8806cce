import assert from "node:assert/strict";
import { createTestOutcome, createTestStart } from "../../../test/helpers/generation-records.js";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import type { Store } from "../store.js";

async function addGeneration(
  store: Store,
  identity: { id: string; workspaceId: string; apiKeyId: string },
  input: { at: string; model?: string; costMicroUsd?: number; tokens?: [number, number]; final?: boolean },
) {
  const start = createTestStart(identity, { model: input.model ?? "a/one", createdAt: new Date(input.at) });
  await store.generations.start(start);
  if (input.final === false) return;
  const [prompt, completion] = input.tokens ?? [10, 5];
  await store.generations.finish(
    identity.id,
    createTestOutcome({
      costMicroUsd: input.costMicroUsd ?? 0,
      tokensPrompt: prompt,
      tokensCompletion: completion,
    }),
  );
}

async function createWorkspaceWithKey(store: Store, name: string) {
  const workspace = await store.workspaces.create({ name, creditsMicroUsd: 100_000_000, invoicing: false });
  const { key } = await store.apiKeys.create({ workspaceId: workspace.id, name });
  return { workspaceId: workspace.id, apiKeyId: key.id };
}

forEachStorageMode("usage reports: latest generations of a workspace, newest first", async ({ store }) => {
  const mine = await createWorkspaceWithKey(store, "mine");
  const otherKey = (await store.apiKeys.create({ workspaceId: mine.workspaceId, name: "second" })).key.id;
  const theirs = await createWorkspaceWithKey(store, "theirs");
  await addGeneration(store, { id: "g-1", ...mine }, { at: "2026-03-01T10:00:00Z", costMicroUsd: 7 });
  await addGeneration(store, { id: "g-2", ...mine, apiKeyId: otherKey }, { at: "2026-03-01T11:00:00Z" });
  await addGeneration(store, { id: "g-3", ...mine }, { at: "2026-03-01T12:00:00Z", final: false });
  await addGeneration(store, { id: "g-x", ...theirs }, { at: "2026-03-01T13:00:00Z" });

  const latest = await store.reports.listGenerations({ workspaceId: mine.workspaceId, limit: 10 });
  assert.deepEqual(
    latest.map((record) => [record.id, record.status]),
    [
      ["g-3", "in_progress"],
      ["g-2", "ok"],
      ["g-1", "ok"],
    ],
  );
  assert.equal(latest[2].costMicroUsd, 7);
  const limited = await store.reports.listGenerations({ workspaceId: mine.workspaceId, limit: 1 });
  assert.deepEqual(
    limited.map((record) => record.id),
    ["g-3"],
  );
  const ofKey = await store.reports.listGenerations({
    workspaceId: mine.workspaceId,
    apiKeyId: otherKey,
    limit: 10,
  });
  assert.deepEqual(
    ofKey.map((record) => record.id),
    ["g-2"],
  );

  const found = await store.reports.findGeneration("g-x");
  assert.equal(found?.workspaceId, theirs.workspaceId);
  assert.equal(await store.reports.findGeneration("g-unknown"), null);
});

forEachStorageMode("usage reports: usage per UTC day and model within the window", async ({ store }) => {
  const mine = await createWorkspaceWithKey(store, "mine");
  const theirs = await createWorkspaceWithKey(store, "theirs");
  const add = (id: string, at: string, model: string, cost: number, tokens: [number, number] = [10, 5]) =>
    addGeneration(store, { id, ...mine }, { at, model, costMicroUsd: cost, tokens });
  await add("before-window", "2026-02-28T23:59:59.999Z", "a/one", 1_000);
  await add("d1-a", "2026-03-01T00:00:00Z", "a/one", 10);
  await add("d1-b", "2026-03-01T23:59:59.999Z", "a/one", 20, [1, 2]);
  await add("d1-c", "2026-03-01T12:00:00Z", "b/two", 5);
  await add("d2-a", "2026-03-02T08:00:00Z", "a/one", 3);
  await add("at-until", "2026-03-03T00:00:00Z", "a/one", 1_000);
  await addGeneration(store, { id: "d2-open", ...mine }, { at: "2026-03-02T09:00:00Z", final: false });
  await addGeneration(store, { id: "foreign", ...theirs }, { at: "2026-03-01T12:00:00Z", costMicroUsd: 99 });

  const usage = await store.reports.sumDailyUsage({
    workspaceId: mine.workspaceId,
    since: new Date("2026-03-01T00:00:00Z"),
    until: new Date("2026-03-03T00:00:00Z"),
  });
  assert.deepEqual(usage, [
    {
      day: "2026-03-01",
      model: "a/one",
      requests: 2,
      tokensPrompt: 11,
      tokensCompletion: 7,
      costMicroUsd: 30,
    },
    {
      day: "2026-03-01",
      model: "b/two",
      requests: 1,
      tokensPrompt: 10,
      tokensCompletion: 5,
      costMicroUsd: 5,
    },
    // The request still in progress counts, at no cost yet.
    {
      day: "2026-03-02",
      model: "a/one",
      requests: 2,
      tokensPrompt: 10,
      tokensCompletion: 5,
      costMicroUsd: 3,
    },
  ]);
});

forEachStorageMode("usage reports: the workspace queries can read the workspace index", async ({ sql }) => {
  // With sequential scans priced out, the plan shows whether an index serves the query at all.
  const plans = await sql.transaction(async (tx) => {
    await tx.query("SET LOCAL enable_seqscan = off");
    const explain = async (query: string) =>
      (await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${query}`))
        .map((row) => row["QUERY PLAN"])
        .join("\n");
    return [
      await explain(
        "SELECT * FROM generations WHERE workspace_id = 'w' ORDER BY created_at DESC, id DESC LIMIT 50",
      ),
      await explain(
        "SELECT model, sum(cost_micro_usd) FROM generations WHERE workspace_id = 'w' AND created_at >= now() - interval '30 days' GROUP BY model",
      ),
    ];
  });
  // The (workspace_id, model, created_at) index of 0025 serves the sum per model too, in model order.
  for (const plan of plans) assert.match(plan, /generations_workspace_(model_)?created_idx/, plan);
});

forEachStorageMode(
  "usage reports: one client session's requests, whichever way they were written",
  async ({ store }) => {
    const mine = await createWorkspaceWithKey(store, "mine");
    const theirs = await createWorkspaceWithKey(store, "theirs");
    const session = { sessionId: "claude-session-1", client: "claude-cli/2.1.332" };
    // Started, then finished (the in-progress row carries the session)...
    await store.generations.start(
      createTestStart({ id: "s-1", ...mine }, { createdAt: new Date("2026-03-01T10:00:00Z"), ...session }),
    );
    await store.generations.finish("s-1", createTestOutcome());
    // ...finished with its start and no row before (finish_generations writes the session)...
    await store.generations.finish(
      "s-2",
      createTestOutcome(),
      createTestStart({ id: "s-2", ...mine }, { createdAt: new Date("2026-03-01T11:00:00Z"), ...session }),
    );
    // ...and still in progress.
    await store.generations.start(
      createTestStart({ id: "s-3", ...mine }, { createdAt: new Date("2026-03-01T12:00:00Z"), ...session }),
    );
    await addGeneration(store, { id: "other-session", ...mine }, { at: "2026-03-01T13:00:00Z" });
    await store.generations.start(
      createTestStart(
        { id: "s-foreign", ...theirs },
        { createdAt: new Date("2026-03-01T14:00:00Z"), ...session },
      ),
    );

    const ofSession = await store.reports.listGenerations({
      workspaceId: mine.workspaceId,
      sessionId: "claude-session-1",
      limit: 10,
    });
    assert.deepEqual(
      ofSession.map((record) => [record.id, record.status, record.sessionId, record.client]),
      [
        ["s-3", "in_progress", "claude-session-1", "claude-cli/2.1.332"],
        ["s-2", "ok", "claude-session-1", "claude-cli/2.1.332"],
        ["s-1", "ok", "claude-session-1", "claude-cli/2.1.332"],
      ],
    );
    const other = await store.generations.get("other-session", mine.workspaceId);
    assert.equal(other?.sessionId, undefined);
    assert.equal(other?.client, undefined);
    const limited = await store.reports.listGenerations({
      workspaceId: mine.workspaceId,
      apiKeyId: mine.apiKeyId,
      sessionId: "claude-session-1",
      limit: 1,
    });
    assert.deepEqual(
      limited.map((record) => record.id),
      ["s-3"],
    );
  },
);

forEachStorageMode("usage reports: the session filter can read the session index", async ({ sql }) => {
  const plan = await sql.transaction(async (tx) => {
    await tx.query("SET LOCAL enable_seqscan = off");
    return (
      await tx.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT * FROM generations WHERE workspace_id = 'w' AND session_id = 's'
         ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 50`,
      )
    )
      .map((row) => row["QUERY PLAN"])
      .join("\n");
  });
  assert.match(plan, /generations_workspace_session_idx/, plan);
});
