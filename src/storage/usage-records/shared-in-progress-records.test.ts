import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import pg from "pg";
import { createTestOutcome, createTestStart } from "../../../test/helpers/generation-records.js";
import {
  createTestSharedState,
  createTestStore,
  requireMode,
  TEST_REDIS_URL,
  type TestStore,
} from "../../../test/helpers/storage-modes.js";
import type { GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import { computeLimitWindows } from "../../limits/limit-windows.js";
import { openStoreWithSqlClient } from "../open-store.js";
import { createRedisLimitCounters } from "../shared-state/redis-limit-counters.js";
import { openRedisScriptRunner } from "../shared-state/redis-script-runner.js";
import type { SharedState } from "../store.js";
import { withSharedInProgressRecords } from "./shared-in-progress-records.js";

/** Two instances on one PostgreSQL database and one Redis, each with its own store and connection. */
async function createTwoInstances(t: TestContext) {
  const first = await createTestStore("postgres");
  t.after(() => first.cleanup());
  const second = await openStoreWithSqlClient({
    databaseUrl: first.databaseUrl as string,
    dataDir: "unused",
  });
  t.after(() => second.store.close());
  const shared = await createTestSharedState("redis");
  t.after(() => shared.cleanup());
  const errors: string[] = [];
  const wrap = (generations: GenerationRepository, state: SharedState) =>
    withSharedInProgressRecords(generations, state, { onError: (_error, what) => errors.push(what) });
  const workspace = await first.store.workspaces.create({
    name: "W",
    creditsMicroUsd: 1_000_000,
    invoicing: false,
  });
  const { key } = await first.store.apiKeys.create({ workspaceId: workspace.id });
  return {
    first,
    instanceA: wrap(first.store.generations, shared.state),
    instanceB: wrap(second.store.generations, await shared.openPeer()),
    shared,
    errors,
    workspace,
    start: (id: string) =>
      createTestStart(
        { id, workspaceId: workspace.id, apiKeyId: key.id },
        { stream: true, createdAt: new Date() },
      ),
  };
}

/** Holds a SHARE lock on generations: inserts wait, reads go on (a slow or busy database). */
async function blockInserts(context: TestStore): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: context.databaseUrl });
  await client.connect();
  await client.query("BEGIN");
  await client.query("LOCK TABLE generations IN SHARE MODE");
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query("COMMIT");
      await client.end();
    },
  };
}

async function rowStatus(context: TestStore, id: string): Promise<string | undefined> {
  const rows = await context.sql.query<{ status: string }>("SELECT status FROM generations WHERE id = $1", [
    id,
  ]);
  return rows[0]?.status;
}

async function settlesWithin<T>(promise: Promise<T>, milliseconds: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), milliseconds);
  });
  const settled = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return settled;
}

test("a stream's record is found by another instance before its row is committed", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { first, instanceA, instanceB, shared, errors, workspace, start } = await createTwoInstances(t);
  const record = start("req_shared_1");
  const lock = await blockInserts(first);
  t.after(() => lock.release());

  assert.ok(await settlesWithin(instanceA.start(record), 2_000), "start does not wait for the blocked row");
  assert.equal(await rowStatus(first, record.id), undefined, "the row is not written yet");
  const seen = await instanceB.get(record.id, workspace.id);
  assert.equal(seen?.status, "in_progress");
  assert.equal(seen?.model, record.model);
  assert.equal(seen?.apiKeyId, record.apiKeyId);
  assert.equal(seen?.createdAt.getTime(), record.createdAt?.getTime());
  assert.equal(await instanceB.get(record.id, "ws_someone_else"), null, "another workspace sees nothing");

  await lock.release();
  for (let attempt = 0; attempt < 100 && (await rowStatus(first, record.id)) === undefined; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(
    await rowStatus(first, record.id),
    "in_progress",
    "the row is still written, in the background",
  );

  await instanceA.finish(record.id, createTestOutcome({ costMicroUsd: 40 }), record);
  assert.equal((await instanceB.get(record.id, workspace.id))?.status, "ok");
  for (
    let attempt = 0;
    attempt < 50 && (await shared.state.getValue(`gen-in-progress:${record.id}`));
    attempt++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(await shared.state.getValue(`gen-in-progress:${record.id}`), null, "deleted once final");
  assert.deepEqual(errors, []);
});

test("without Redis a stream's start waits for its row, as before", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { first, errors, workspace, start } = await createTwoInstances(t);
  const brokenState = await createTestSharedState("redis");
  await brokenState.state.close();
  const instance = withSharedInProgressRecords(first.store.generations, brokenState.state, {
    onError: (_error, what) => errors.push(what),
  });
  const record = start("req_shared_2");
  const lock = await blockInserts(first);
  t.after(() => lock.release());

  const started = instance.start(record);
  assert.equal(await settlesWithin(started, 300), false, "start waits while the row cannot be written");
  await lock.release();
  await started;
  assert.equal(await rowStatus(first, record.id), "in_progress");
  assert.equal((await instance.get(record.id, workspace.id))?.status, "in_progress");
  assert.ok(errors.includes("in-progress record not shared through Redis"));
});

test("a non-streamed start writes no row; another instance lists it, and a stream's, once admitted long enough ago; finishing unlists it", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { first, instanceA, instanceB, workspace, start, errors } = await createTwoInstances(t);
  const admittedAt = new Date(Date.now() - 60_000);
  const nonStreamed = {
    ...start("req_shared_plain"),
    stream: false,
    createdAt: admittedAt,
    estimatedInputTokens: 42,
    sessionId: "codex-session",
    client: "codex_exec/0.171.0",
  };
  const streamed = { ...start("req_shared_stream"), createdAt: admittedAt, estimatedInputTokens: 7 };
  await instanceA.start(nonStreamed);
  await instanceA.start(streamed);
  for (let attempt = 0; attempt < 100 && (await rowStatus(first, streamed.id)) === undefined; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(await rowStatus(first, nonStreamed.id), undefined, "no row for a non-streamed start");
  assert.equal(await rowStatus(first, streamed.id), "in_progress");

  assert.deepEqual(await instanceB.listInProgress(new Date(admittedAt.getTime() - 1), 10), [], "too young");
  const listed = await instanceB.listInProgress(new Date(), 10);
  assert.deepEqual(
    listed.map((record) => [record.id, record.stream, record.estimatedInputTokens]).sort(),
    [
      [nonStreamed.id, false, 42],
      [streamed.id, true, 7],
    ].sort(),
    "each listed once, with its prompt estimate",
  );

  // The instance that lists a record may settle it: the value and its index entry go once final.
  const listedPlain = listed.find((record) => record.id === nonStreamed.id)!;
  await instanceB.finish(nonStreamed.id, createTestOutcome({ status: "interrupted" }), listedPlain);
  await instanceA.finish(streamed.id, createTestOutcome(), streamed);
  for (
    let attempt = 0;
    attempt < 50 && (await instanceB.listInProgress(new Date(), 10)).length > 0;
    attempt++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await instanceB.listInProgress(new Date(), 10), []);
  const settled = await instanceA.get(nonStreamed.id, workspace.id);
  assert.equal(settled?.status, "interrupted");
  // The session went through Redis and the other instance's settlement into the row.
  assert.equal(settled?.sessionId, "codex-session");
  assert.equal(settled?.client, "codex_exec/0.171.0");
  assert.deepEqual(errors, []);
});

test("a record carrying its instance is listed under that instance whatever its age; finishing unlists it there too", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { instanceA, instanceB, start, errors } = await createTwoInstances(t);
  const owned = { ...start("req_owned"), stream: false, instanceId: "inst_a", estimatedInputTokens: 5 };
  const other = { ...start("req_other"), stream: false, instanceId: "inst_b" };
  await instanceA.start(owned);
  await instanceA.start(other);

  const listed = (await instanceB.listInProgressOf!("inst_a", 10)).map((record) => [
    record.id,
    record.instanceId,
    record.estimatedInputTokens,
  ]);
  assert.deepEqual(listed, [[owned.id, "inst_a", 5]], "admitted just now, listed all the same");
  assert.deepEqual(await instanceB.listInProgressOf!("inst_nobody", 10), []);

  await instanceB.finish(owned.id, createTestOutcome({ status: "interrupted" }), owned);
  for (
    let attempt = 0;
    attempt < 50 && (await instanceB.listInProgressOf!("inst_a", 10)).length > 0;
    attempt++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await instanceB.listInProgressOf!("inst_a", 10), []);
  assert.deepEqual(
    (await instanceB.listInProgress(new Date(), 10)).map((record) => record.id),
    [other.id],
    "unlisted from the index of every record too",
  );
  await instanceA.finish(other.id, createTestOutcome(), other);
  assert.deepEqual(errors, []);
});

test("stored by the reservation's script: admitted with it, found at once, final before its row, swept with its outcome", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const { first, instanceA, instanceB, shared, errors, workspace, start } = await createTwoInstances(t);
  const runner = await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix: shared.prefix });
  t.after(() => runner.close());
  const counters = createRedisLimitCounters(runner);
  const { epoch } = await counters.checkEpoch({ known: "", candidate: "epoch_1", recoveryMs: 0 });
  const reserve = (record: GenerationStart, amountMicroUsd: number, limit: number | null) =>
    counters.reserve({
      requestId: record.id,
      keyId: record.apiKeyId,
      workspaceId: record.workspaceId,
      amountMicroUsd,
      limits: { daily: null, monthly: null, total: limit },
      checkBalance: false,
      requestsPerMinute: null,
      windows: computeLimitWindows(Date.now(), null),
      leaseTtlMs: 60_000,
      epoch,
      record: instanceA.admissionRecord!(record),
    });
  const seedTotal = async (record: GenerationStart, amountMicroUsd: number, limit: number) => {
    const reply = await reserve(record, amountMicroUsd, limit);
    if (reply.kind !== "seed") return reply;
    await counters.finishSeed({
      token: reply.token,
      keyId: record.apiKeyId,
      workspaceId: record.workspaceId,
      windows: computeLimitWindows(Date.now(), null),
      counters: reply.counters.map((name) => ({ name, baseMicroUsd: 0, adjustments: [] })),
    });
    return reserve(record, amountMicroUsd, limit);
  };

  // Refused: no record is left behind.
  const refused = {
    ...start("req_script_refused"),
    stream: false,
    createdAt: undefined,
    instanceId: "inst_a",
  };
  assert.equal((await seedTotal(refused, 5_000, 1_000)).kind, "limit");
  assert.equal(await shared.state.getValue(`gen-in-progress:${refused.id}`), null);
  assert.equal(await instanceB.get(refused.id, workspace.id), null);

  // Admitted: stored in the same step, with the admission time the script read.
  const record: GenerationStart = {
    ...start("req_script_1"),
    stream: false,
    createdAt: undefined,
    instanceId: "inst_a",
  };
  const admitted = await seedTotal(record, 500, 1_000);
  assert.equal(admitted.kind, "ok");
  assert.ok(admitted.kind === "ok" && admitted.recordStored === true);
  const admittedAt = new Date(admitted.kind === "ok" ? admitted.nowMs : 0);
  record.createdAt = admittedAt;
  await instanceA.start(record, true);
  assert.equal(await rowStatus(first, record.id), undefined, "a non-streamed record has no row");
  const seen = await instanceB.get(record.id, workspace.id);
  assert.equal(seen?.status, "in_progress");
  assert.equal(seen?.createdAt.getTime(), admittedAt.getTime(), "the script's admission time");
  const listed = await instanceB.listInProgressOf!("inst_a", 10);
  assert.deepEqual(
    listed.map((each) => [each.id, each.createdAt?.getTime()]),
    [[record.id, admittedAt.getTime()]],
  );

  // Settled while its row is held back: final for the other instance at once, and a sweep of its
  // instance (had it died here) writes its outcome, not `interrupted`.
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  t.after(() => release());
  const heldBack = withSharedInProgressRecords(
    Object.assign({}, first.store.generations, {
      async finish(...args: Parameters<GenerationRepository["finish"]>) {
        await gate;
        return first.store.generations.finish(...args);
      },
    }),
    shared.state,
    { onError: (_error, what) => errors.push(what) },
  );
  await heldBack.start(record, true);
  const outcome = createTestOutcome({ costMicroUsd: 70 });
  const finished = heldBack.finish(record.id, outcome, record);
  let final = await instanceB.get(record.id, workspace.id);
  for (let attempt = 0; attempt < 50 && final?.status !== "ok"; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    final = await instanceB.get(record.id, workspace.id);
  }
  assert.equal(final?.status, "ok");
  assert.equal(final?.costMicroUsd, 70);
  assert.equal(final?.createdAt.getTime(), admittedAt.getTime());
  // Only the outcome and the finish time were sent: added to the value the admission stored.
  const value = JSON.parse((await shared.state.getValue(`gen-in-progress:${record.id}`))!);
  assert.deepEqual(Object.keys(value), ["admittedAt", "start", "at", "outcome", "finishedAt"]);
  assert.equal(final?.finishedAt?.toISOString(), value.finishedAt);
  assert.equal(await rowStatus(first, record.id), undefined, "its row is not written yet");
  const swept = await instanceB.listInProgressOf!("inst_a", 10);
  assert.equal(swept.length, 1);
  assert.equal(swept[0].settledWith?.costMicroUsd, 70);

  release();
  await finished;
  assert.equal(await rowStatus(first, record.id), "ok");
  for (
    let attempt = 0;
    attempt < 50 && (await shared.state.getValue(`gen-in-progress:${record.id}`));
    attempt++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(await shared.state.getValue(`gen-in-progress:${record.id}`), null, "deleted once final");
  assert.deepEqual(errors, []);
});
