import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { createTestOutcome, createTestStart } from "../../../test/helpers/generation-records.js";
import { createTestStore, requireMode } from "../../../test/helpers/storage-modes.js";
import type { GenerationStart } from "../../engine/generation-record.js";
import { createGenerationRepository } from "./generation-repository.js";
import { createBatchedGenerationRepository, createGroupCommit } from "./group-commit.js";

test("group commit: a lone item is written at once, concurrent ones share writes", async () => {
  const writes: number[][] = [];
  let release: (() => void) | undefined;
  const commit = createGroupCommit<number>({
    maxBatch: 3,
    async write(items) {
      writes.push([...items]);
      // The first write stays in flight until released, so the next items queue behind it.
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  const first = commit.submit(1);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, [[1]], "written without waiting for company");
  const rest = [2, 3, 4, 5, 6].map((item) => commit.submit(item));
  release?.();
  await Promise.all([first, ...rest]);
  assert.deepEqual(writes, [[1], [2, 3, 4], [5, 6]], "queued items share writes of at most maxBatch");
});

test("group commit: one bad item fails alone; the others of its batch are written", async () => {
  const written: string[] = [];
  const commit = createGroupCommit<string>({
    maxBatch: 10,
    async write(items) {
      if (items.includes("bad")) throw new RangeError("bad item");
      written.push(...items);
    },
  });
  const results = await Promise.allSettled(["a", "bad", "b"].map((item) => commit.submit(item)));
  assert.deepEqual(
    results.map((result) => result.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof RangeError);
  assert.deepEqual(written.sort(), ["a", "b"]);
});

test("group commit: drain waits for writes in flight", async () => {
  let done = false;
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    async write() {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = true;
    },
  });
  void commit.submit(1);
  await commit.drain();
  assert.equal(done, true);
});

test("group commit: a queued item can be withdrawn before a write carries it", async () => {
  const writes: number[][] = [];
  let release: (() => void) | undefined;
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    async write(items) {
      writes.push([...items]);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  const inFlight = commit.submit(1);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  const queued = [2, 3, 4].map((item) => commit.submit(item));
  assert.equal(
    commit.withdraw((item) => item === 3 || item === 1),
    1,
    "only the queued 3, not the in-flight 1",
  );
  release?.();
  await Promise.all([inFlight, ...queued]);
  assert.deepEqual(writes, [[1], [2, 4]]);
});

test("group commit with a linger: items of its milliseconds share one write; hurry and drain end it at once", async () => {
  const writes: Array<{ items: number[]; at: number }> = [];
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    lingerMs: 60_000,
    async write(items) {
      writes.push({ items: [...items], at: performance.now() });
    },
  });
  const started = performance.now();
  const first = commit.submit(1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = commit.submit(2);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(writes.length, 0, "nothing written while the linger lasts");
  commit.hurry();
  await Promise.all([first, second]);
  assert.deepEqual(
    writes.map((write) => write.items),
    [[1, 2]],
    "both in one write",
  );
  assert.ok(writes[0].at - started < 5_000, "written when hurried, not after the linger");

  const third = commit.submit(3);
  await commit.drain();
  await third;
  assert.deepEqual(
    writes.map((write) => write.items),
    [[1, 2], [3]],
    "drain writes what lingers",
  );
});

test("group commit with a linger: what queues behind a write in flight does not wait again", async () => {
  const writes: number[][] = [];
  let release: (() => void) | undefined;
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    lingerMs: 60_000,
    async write(items) {
      writes.push([...items]);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  const first = commit.submit(1);
  commit.hurry();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(writes, [[1]]);
  const queued = [2, 3].map((item) => commit.submit(item));
  release?.();
  const started = performance.now();
  await Promise.all([first, ...queued]);
  assert.deepEqual(writes, [[1], [2, 3]]);
  assert.ok(performance.now() - started < 5_000, "written right after the write in flight");
});

test("the batched repository's linger ends when a reader waits for the records answered before it", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const workspace = await context.store.workspaces.create({ name: "W", creditsMicroUsd: 0, invoicing: true });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const sql = createGenerationRepository(context.sql);
  const repository = createBatchedGenerationRepository(sql, { lingerMs: 60_000 });
  const start = createTestStart(
    { id: "req_linger", workspaceId: workspace.id, apiKeyId: key.id },
    { stream: true },
  );
  const started = performance.now();
  const written = repository.finish("req_linger", createTestOutcome({ costMicroUsd: 7 }), start);
  await repository.finishedBefore();
  await written;
  assert.ok(performance.now() - started < 2_000, "the reader did not wait out the minute's linger");
  assert.equal((await sql.get("req_linger", workspace.id))?.costMicroUsd, 7, "committed");
  await repository.drain();
});

/**
 * The real SQL repository behind the batched one, on a fresh embedded store, with its start and
 * finish writes held back until their gates open; `started` lists each start write's ids.
 */
async function createGatedRepository(t: TestContext) {
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const workspace = await context.store.workspaces.create({ name: "W", creditsMicroUsd: 0, invoicing: true });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const sql = createGenerationRepository(context.sql);
  const started: string[][] = [];
  let openStarts: () => void = () => {};
  const startsHeld = new Promise<void>((resolve) => (openStarts = resolve));
  let openFinishes: () => void = () => {};
  const finishesHeld = new Promise<void>((resolve) => (openFinishes = resolve));
  const repository = createBatchedGenerationRepository({
    ...sql,
    startMany: async (records) => {
      started.push(records.map((record) => record.id));
      await startsHeld;
      await sql.startMany(records);
    },
    finishMany: async (entries) => {
      await finishesHeld;
      await sql.finishMany(entries);
    },
  });
  const record = (id: string, overrides: Partial<GenerationStart> = {}): GenerationStart =>
    createTestStart({ id, workspaceId: workspace.id, apiKeyId: key.id }, { stream: true, ...overrides });
  return { sql, repository, workspace, record, started, openStarts, openFinishes };
}

test("a record whose in-progress row is still being written is found by its id, in its workspace only", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, repository, workspace, record, openStarts } = await createGatedRepository(t);
  const start = record("req_pending_1", {
    ingressFormat: "anthropic_messages",
    createdAt: new Date("2026-11-22T04:00:00.000Z"),
  });
  const written = repository.start(start);
  assert.equal(await sql.get(start.id, workspace.id), null, "not in the database yet");

  const pending = await repository.get(start.id, workspace.id);
  assert.equal(pending?.status, "in_progress");
  assert.equal(pending?.ingressFormat, "anthropic_messages");
  assert.equal(pending?.createdAt.toISOString(), "2026-11-22T04:00:00.000Z");
  assert.equal(pending?.finishedAt, null);
  assert.equal(await repository.get(start.id, "ws_other"), null, "another workspace sees nothing");

  openStarts();
  await written;
  const stored = await repository.get(start.id, workspace.id);
  assert.equal(stored?.status, "in_progress");
  assert.deepEqual(stored, pending, "the row reads back exactly as it was served before");
  await repository.drain();
});

test("a stream that finishes before its in-progress row was written writes only the final row", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { repository, workspace, record, started, openStarts, openFinishes } = await createGatedRepository(t);
  // A start in flight holds the writer; the second stream's start queues behind it.
  const first = repository.start(record("req_a"));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  const second = repository.start(record("req_b"));
  const finished = repository.finish(
    "req_b",
    createTestOutcome({ tokensCompletion: 2, costMicroUsd: 5, latencyMs: 3 }),
    record("req_b"),
  );
  await second;
  assert.equal((await repository.get("req_b", workspace.id))?.status, "ok", "visible, final, until written");
  openStarts();
  openFinishes();
  await Promise.all([first, finished]);
  assert.deepEqual(started, [["req_a"]], "req_b's in-progress row was never written");
  assert.equal((await repository.get("req_b", workspace.id))?.status, "ok");
  assert.equal((await repository.get("req_b", workspace.id))?.costMicroUsd, 5);
});
