import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { createTestOutcome, createTestStart } from "../../../test/helpers/generation-records.js";
import { runUntilKilled } from "../../../test/helpers/killed-child.js";
import { createTestStore, requireMode } from "../../../test/helpers/storage-modes.js";
import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import { openStoreWithSqlClient, openUsageRecorder } from "../open-store.js";
import { openSharedState } from "../shared-state/shared-state.js";
import {
  createJournaledGenerationRepository,
  measureLoopUtilization,
  replayUsageJournal,
} from "./embedded-recorder.js";
import { createGenerationRepository, type FinishEntry } from "./generation-repository.js";
import { openFileOutcomeOutbox } from "./outcome-outbox.js";
import { openUsageJournal, SET_ASIDE_FILE_NAME } from "./usage-journal.js";

async function temporaryFolder(t: TestContext, prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** A migrated embedded database, its raw SQL repository (which counts finish statements), a journal. */
async function createJournaledSetup(
  t: TestContext,
  options: { lingerMs: number; busyLingerMs?: number; maxStatement?: number; loopUtilization?: () => number },
) {
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const workspace = await context.store.workspaces.create({
    name: "W",
    creditsMicroUsd: 1_000_000,
    invoicing: false,
  });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const sql = createGenerationRepository(context.sql);
  const finishStatements: string[][] = [];
  const startStatements: string[][] = [];
  const countingSql = {
    ...sql,
    startMany: async (records: readonly GenerationStart[]) => {
      startStatements.push(records.map((record) => record.id));
      await sql.startMany(records);
    },
    finishMany: async (entries: readonly (FinishEntry & { start: GenerationStart })[]) => {
      finishStatements.push(entries.map((entry) => entry.id));
      await sql.finishMany(entries);
    },
  };
  const journalDirectory = await temporaryFolder(t, "journal-");
  const journal = openUsageJournal(journalDirectory);
  const writeErrors: Array<{ ids: readonly string[]; setAside: boolean }> = [];
  const repository = createJournaledGenerationRepository(countingSql, journal, {
    lingerMs: options.lingerMs,
    busyLingerMs: options.busyLingerMs,
    maxStatement: options.maxStatement,
    // A calm loop unless a test says otherwise: a busy test process must not lengthen the linger
    // that a test's timing relies on.
    loopUtilization: options.loopUtilization ?? (() => 0),
    onWriteError: (_error, ids, setAside) => writeErrors.push({ ids, setAside }),
  });
  t.after(() => repository.close().catch(() => {}));
  const start = (id: string, overrides: Partial<GenerationStart> = {}): GenerationStart =>
    createTestStart(
      { id, workspaceId: workspace.id, apiKeyId: key.id },
      { createdAt: new Date("2026-11-22T06:00:00.000Z"), ...overrides },
    );
  return {
    ...context,
    sql,
    repository,
    journalDirectory,
    workspace,
    start,
    finishStatements,
    startStatements,
    writeErrors,
  };
}

function outcome(costMicroUsd: number): GenerationOutcome {
  return createTestOutcome({ tokensPrompt: 12, tokensCompletion: 30, costMicroUsd, latencyMs: 41 });
}

async function segmentSizes(directory: string): Promise<number[]> {
  const names = (await readdir(directory)).filter((name) => name.startsWith("segment-"));
  return Promise.all(names.map(async (name) => (await stat(join(directory, name))).size));
}

test("a journaled record is answered before its row is written, and reads back the same before and after", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, repository, journalDirectory, workspace, start } = await createJournaledSetup(t, {
    lingerMs: 60_000,
  });
  await repository.finish("req_journal_1", outcome(250), start("req_journal_1"));

  assert.equal(await sql.get("req_journal_1", workspace.id), null, "not in the database yet");
  assert.ok(
    (await segmentSizes(journalDirectory)).some((size) => size > 0),
    "the journal holds it",
  );
  const fromMemory = await repository.get("req_journal_1", workspace.id);
  assert.equal(fromMemory?.status, "ok");
  assert.equal(fromMemory?.costMicroUsd, 250);
  assert.equal(
    await repository.get("req_journal_1", "ws_someone_else"),
    null,
    "another workspace sees nothing",
  );

  await repository.flush();
  const fromDatabase = await sql.get("req_journal_1", workspace.id);
  assert.deepEqual(fromDatabase, fromMemory, "the written row is what lookups already showed");
  assert.deepEqual(await segmentSizes(journalDirectory), [0], "a written record leaves no line behind");
});

test("records finishing within the linger share one statement, and the balance is debited once each", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { store, repository, workspace, start, finishStatements } = await createJournaledSetup(t, {
    lingerMs: 200,
  });
  const ids = Array.from({ length: 40 }, (_, index) => `req_linger_${index}`);
  await Promise.all(ids.map((id) => repository.finish(id, outcome(100), start(id))));
  // A repeated finish is a no-op, as in the database: the first final outcome wins.
  await repository.finish(ids[0], outcome(99_999), start(ids[0]));
  assert.deepEqual(finishStatements, [], "nothing written before the linger ends");

  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.deepEqual(finishStatements, [ids], "one statement carried all of them");
  const after = await store.workspaces.get(workspace.id);
  assert.equal(after?.balanceMicroUsd, 1_000_000 - 40 * 100);
});

test("a pass writes at most maxStatement records per statement, and the event loop runs between two", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { store, repository, workspace, start, finishStatements } = await createJournaledSetup(t, {
    lingerMs: 50,
    maxStatement: 4,
  });
  const ids = Array.from({ length: 10 }, (_, index) => `req_split_${index}`);
  await Promise.all(ids.map((id) => repository.finish(id, outcome(100), start(id))));
  // A timer due while the pass runs fires between its statements, not after the last one.
  let statementsWhenTimerRan = -1;
  await new Promise((resolve) => setTimeout(resolve, 50));
  setImmediate(() => {
    statementsWhenTimerRan = finishStatements.length;
  });
  await repository.drain();
  assert.deepEqual(finishStatements, [ids.slice(0, 4), ids.slice(4, 8), ids.slice(8)]);
  assert.ok(
    statementsWhenTimerRan >= 1 && statementsWhenTimerRan < 3,
    `ran after ${statementsWhenTimerRan} statements`,
  );
  const after = await store.workspaces.get(workspace.id);
  assert.equal(after?.balanceMicroUsd, 1_000_000 - 10 * 100);
});

test("a busy event loop writes bigger batches: the linger grows while busy and returns when calm", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  let utilization = 1;
  const { repository, start, finishStatements } = await createJournaledSetup(t, {
    lingerMs: 10,
    busyLingerMs: 60_000,
    loopUtilization: () => utilization,
  });
  const waitForStatements = async (count: number) => {
    for (let waited = 0; finishStatements.length < count && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(finishStatements.length, count, `statement ${count} was written`);
  };

  await repository.finish("req_busy_1", outcome(10), start("req_busy_1"));
  await waitForStatements(1); // Written after the short linger; the pass then finds the loop busy.
  await repository.finish("req_busy_2", outcome(10), start("req_busy_2"));
  await repository.finish("req_busy_3", outcome(10), start("req_busy_3"));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(finishStatements.length, 1, "while busy, records wait for the long linger");

  utilization = 0.5;
  await repository.drain(); // What a read does: it writes at once, whatever the linger.
  assert.deepEqual(finishStatements[1], ["req_busy_2", "req_busy_3"], "one statement for both");
  await repository.finish("req_busy_4", outcome(10), start("req_busy_4"));
  await waitForStatements(3); // The pass of the drain found the loop calm: the short linger again.
  assert.deepEqual(finishStatements[2], ["req_busy_4"]);
});

test("the default measure reads the event loop: busy while code runs, calm while it waits", async () => {
  const utilization = measureLoopUtilization();
  utilization(); // Starts the window here.
  for (const end = performance.now() + 60; performance.now() < end; ) {
    // Busy: the loop never gets to wait.
  }
  assert.ok(utilization() >= 0.9, "60 ms of synchronous work counts as busy");
  // Other work of this process (a test file's leftovers, a collection) may fall into one window
  // on a loaded machine: a loop that waits must read calm in one of a few.
  const readings: number[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 60));
    readings.push(utilization());
    if (readings.at(-1)! < 0.7) break;
  }
  assert.ok(readings.at(-1)! < 0.7, `60 ms waiting on a timer counts as calm: read ${readings.join(", ")}`);
});

test("between calm and busy the linger stays as it was", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const readings = [1, 0.8];
  const { repository, start, finishStatements } = await createJournaledSetup(t, {
    lingerMs: 10,
    busyLingerMs: 60_000,
    loopUtilization: () => readings.shift() ?? 0.8,
  });
  await repository.finish("req_between_1", outcome(10), start("req_between_1"));
  await repository.drain(); // Busy: the long linger.
  await repository.finish("req_between_2", outcome(10), start("req_between_2"));
  await repository.drain(); // 0.8: neither busy nor calm, so still the long linger.
  await repository.finish("req_between_3", outcome(10), start("req_between_3"));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(finishStatements.length, 2, "the third record waits for the long linger");
});

test("an in-progress record is found at once, and a finish before its write replaces it", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, repository, workspace, start } = await createJournaledSetup(t, { lingerMs: 60_000 });
  await repository.start(start("req_stream_1", { stream: true }));
  assert.equal((await repository.get("req_stream_1", workspace.id))?.status, "in_progress");
  await repository.finish("req_stream_1", outcome(7), start("req_stream_1", { stream: true }));
  assert.equal((await repository.get("req_stream_1", workspace.id))?.status, "ok");
  await repository.start(start("req_stream_2", { stream: true }));
  await repository.flush();
  assert.equal((await sql.get("req_stream_1", workspace.id))?.status, "ok");
  assert.equal((await sql.get("req_stream_2", workspace.id))?.status, "in_progress");
});

test("an in-progress record waits for a flush: a stream that ends first is written once, final", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, repository, workspace, start, finishStatements, startStatements } = await createJournaledSetup(
    t,
    { lingerMs: 10 },
  );
  await repository.start(start("req_short_stream", { stream: true }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(startStatements, [], "the linger timer does not write in-progress rows");
  assert.equal(await sql.get("req_short_stream", workspace.id), null);
  assert.equal((await repository.get("req_short_stream", workspace.id))?.status, "in_progress");

  await repository.finish("req_short_stream", outcome(3), start("req_short_stream", { stream: true }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(finishStatements, [["req_short_stream"]]);
  assert.deepEqual(startStatements, [], "its in-progress row was never written");
  assert.equal((await sql.get("req_short_stream", workspace.id))?.status, "ok");

  await repository.start(start("req_long_stream", { stream: true }));
  await repository.finish("req_other", outcome(2), start("req_other"));
  await repository.drain();
  assert.equal(
    (await sql.get("req_other", workspace.id))?.status,
    "ok",
    "drain (before other reads) writes finals",
  );
  assert.deepEqual(startStatements, [], "but not in-progress rows: no read depends on them");
  await repository.flush();
  assert.deepEqual(startStatements, [["req_long_stream"]], "flush (close) writes them");
  assert.equal((await sql.get("req_long_stream", workspace.id))?.status, "in_progress");
});

test("a record the database refuses is set aside with its reason; the rest of its batch is written", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, repository, journalDirectory, workspace, start, writeErrors } = await createJournaledSetup(t, {
    lingerMs: 60_000,
  });
  await repository.finish("req_good_1", outcome(5), start("req_good_1"));
  await repository.finish(
    "req_orphan",
    outcome(5),
    start("req_orphan", { workspaceId: "ws_does_not_exist" }),
  );
  await repository.finish("req_good_2", outcome(5), start("req_good_2"));
  await repository.flush();

  assert.equal((await sql.get("req_good_1", workspace.id))?.status, "ok");
  assert.equal((await sql.get("req_good_2", workspace.id))?.status, "ok");
  assert.deepEqual(writeErrors, [{ ids: ["req_orphan"], setAside: true }]);
  const setAside = (await readFile(join(journalDirectory, SET_ASIDE_FILE_NAME), "utf8")).trim().split("\n");
  assert.equal(setAside.length, 1);
  const entry = JSON.parse(setAside[0]) as { reason: string; line: string };
  assert.match(entry.line, /req_orphan/);
  assert.match(entry.reason, /foreign key/i);
  assert.deepEqual(await segmentSizes(journalDirectory), [0]);
});

test("reads through the store wait for journaled records: a balance read right after a request shows its cost", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const dataDir = await mkdtemp(join(tmpdir(), "journal-store-"));
  const { store } = await openStoreWithSqlClient({ dataDir });
  t.after(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 10_000, invoicing: false });
  const { key } = await store.apiKeys.create({ workspaceId: workspace.id });
  const record = createTestStart(
    { id: "req_read_after", workspaceId: workspace.id, apiKeyId: key.id },
    { ingressFormat: "responses", createdAt: new Date() },
  );
  await store.generations.finish(record.id, outcome(1_234), record);
  assert.equal((await store.workspaces.get(workspace.id))?.balanceMicroUsd, 10_000 - 1_234);
});

test("closing writes what is journaled even when nothing else keeps the process alive", async (t) => {
  const journalDirectory = await temporaryFolder(t, "journal-close-");
  const moduleUrl = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
  // No database, server or timer in the child: only the writer's own pass can keep it running.
  const childSource = `
    import { createJournaledGenerationRepository } from ${moduleUrl("./embedded-recorder.ts")};
    import { openUsageJournal } from ${moduleUrl("./usage-journal.ts")};
    const written = [];
    const sql = { finishMany: async (entries) => { written.push(...entries.map((entry) => entry.id)); } };
    const repository = createJournaledGenerationRepository(sql, openUsageJournal(${JSON.stringify(journalDirectory)}), {
      lingerMs: 60000,
    });
    const start = ${JSON.stringify(createTestStart({ id: "req_alone", workspaceId: "ws_1", apiKeyId: "key_1" }))};
    await repository.finish("req_alone", ${JSON.stringify(outcome(7))}, start);
    await repository.close();
    process.stdout.write("closed after writing " + written.join(","));
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", childSource], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const [code] = (await once(child, "close")) as [number | null];
  assert.equal(output, "closed after writing req_alone");
  assert.equal(code, 0);
});

test("a killed process loses no acknowledged record: the next start writes its journal, debiting once", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const dataDir = await temporaryFolder(t, "journal-crash-");
  const openStoreUrl = new URL("../open-store.ts", import.meta.url).href;
  // The child acknowledges each record once `finish` resolved, then dies without closing the store.
  const childSource = `
    import { openStore } from ${JSON.stringify(openStoreUrl)};
    const store = await openStore({ dataDir: ${JSON.stringify(dataDir)} });
    const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 100000, invoicing: false });
    const { key } = await store.apiKeys.create({ workspaceId: workspace.id });
    process.stdout.write(JSON.stringify({ workspaceId: workspace.id }) + "\\n");
    const outcome = ${JSON.stringify(outcome(300))};
    for (let index = 0; index < 30; index++) {
      const id = "req_crash_" + index;
      await store.generations.finish(id, outcome, {
        id, workspaceId: workspace.id, apiKeyId: key.id, model: "openai/gpt-4o",
        ingressFormat: "anthropic_messages", source: "api", stream: index % 2 === 0, createdAt: new Date(),
        sessionId: "session-" + index, client: "claude-cli/2.1.332",
      });
      process.stdout.write(id + "\\n");
    }
    process.kill(process.pid, "SIGKILL");
  `;
  const { stdout, stderr, signal } = await runUntilKilled(childSource);
  assert.equal(signal, "SIGKILL", stderr);
  const [first, ...acknowledged] = stdout.trim().split("\n");
  const { workspaceId } = JSON.parse(first) as { workspaceId: string };
  assert.equal(acknowledged.length, 30, stdout);

  const { store, client } = await openStoreWithSqlClient({ dataDir });
  try {
    for (const id of acknowledged) {
      const record = await store.generations.get(id, workspaceId);
      assert.equal(record?.status, "ok", id);
      assert.equal(record?.ingressFormat, "anthropic_messages");
      assert.equal(
        record?.sessionId,
        id.replace("req_crash_", "session-"),
        "the session survives the journal",
      );
      assert.equal(record?.client, "claude-cli/2.1.332");
    }
    assert.equal((await store.workspaces.get(workspaceId))?.balanceMicroUsd, 100_000 - 30 * 300);
    const [ledger] = await client.query<{ lines: string }>(
      "SELECT count(*) AS lines FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'",
      [workspaceId],
    );
    assert.equal(Number(ledger.lines), 30);
    const leftovers = (await readdir(join(dataDir, "journal"))).filter((name) => name.startsWith("segment-"));
    assert.equal(leftovers.length, 1, `only this process's own segment remains: ${leftovers}`);
  } finally {
    await store.close();
  }
});

test("replaying a journal twice debits once, and a torn last line is set aside", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, store, workspace, start } = await createJournaledSetup(t, { lingerMs: 60_000 });
  const crashed = await temporaryFolder(t, "journal-torn-");
  const line = JSON.stringify({
    v: 1,
    at: "2026-11-22T06:00:01.000Z",
    start: start("req_replayed"),
    outcome: outcome(400),
  });
  const segment = "segment-1700000000000-000001.jsonl";
  await writeFile(join(crashed, segment), `${line}\n${line.slice(0, 40)}`);

  for (let pass = 0; pass < 2; pass++) {
    if (pass === 1) await writeFile(join(crashed, segment), `${line}\n`); // A crash during the first replay.
    const journal = openUsageJournal(crashed);
    await replayUsageJournal(sql, journal);
    journal.close();
  }
  const record = await sql.get("req_replayed", workspace.id);
  assert.equal(record?.costMicroUsd, 400);
  assert.equal(record?.finishedAt?.toISOString(), "2026-11-22T06:00:01.000Z", "it keeps its own finish time");
  assert.equal((await store.workspaces.get(workspace.id))?.balanceMicroUsd, 1_000_000 - 400);
  const setAside = await readFile(join(crashed, SET_ASIDE_FILE_NAME), "utf8");
  assert.match(setAside, /unreadable journal line/);
  assert.deepEqual(
    (await readdir(crashed)).filter((name) => name.startsWith("segment-")).length,
    0,
    "replayed segments are deleted (the journals opened here were closed with nothing outstanding)",
  );
});

test("a stream in flight when the process dies is in progress after the next start", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const { sql, store, workspace, start } = await createJournaledSetup(t, { lingerMs: 10 });
  const directory = await temporaryFolder(t, "journal-in-flight-");
  const dying = createJournaledGenerationRepository(sql, openUsageJournal(directory), { lingerMs: 10 });
  await dying.start(start("req_in_flight", { stream: true }));
  await dying.finish("req_done", outcome(9), start("req_done"));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await sql.get("req_done", workspace.id))?.status, "ok");
  assert.equal(await sql.get("req_in_flight", workspace.id), null, "only journaled when the process dies");

  // The process is gone without closing anything; the next start replays its journal.
  const journal = openUsageJournal(directory);
  await replayUsageJournal(sql, journal);
  journal.close();
  assert.equal((await sql.get("req_in_flight", workspace.id))?.status, "in_progress");
  // req_done shares the dead process's segment, so it is replayed too: idempotently.
  assert.equal((await sql.get("req_done", workspace.id))?.status, "ok");
  assert.equal((await store.workspaces.get(workspace.id))?.balanceMicroUsd, 1_000_000 - 9, "debited once");
});

test("segments rotate past their size and are deleted once every entry in them was written", async (t) => {
  const directory = await temporaryFolder(t, "journal-rotate-");
  const journal = openUsageJournal(directory, { maxSegmentBytes: 100 });
  const handles = Array.from({ length: 10 }, (_, index) =>
    journal.append(`{"line":${index},"pad":"${"x".repeat(40)}"}`),
  );
  assert.ok((await segmentSizes(directory)).length >= 4, "several segments");
  for (const handle of handles) journal.release(handle);
  assert.deepEqual(await segmentSizes(directory), [0], "only the current one is left, empty");
  journal.close();
  assert.deepEqual(await segmentSizes(directory), []);
});

test("a journal append that fails (disk full) does not fail the record: it is written with its batch", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const workspace = await context.store.workspaces.create({
    name: "W",
    creditsMicroUsd: 1_000,
    invoicing: false,
  });
  const { key } = await context.store.apiKeys.create({ workspaceId: workspace.id });
  const journal = openUsageJournal(await temporaryFolder(t, "journal-full-"));
  const failing = Object.assign({}, journal, {
    append(): never {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    },
  });
  const journalErrors: string[] = [];
  const repository = createJournaledGenerationRepository(createGenerationRepository(context.sql), failing, {
    lingerMs: 60_000,
    loopUtilization: () => 0,
    onJournalError: (_error, id) => journalErrors.push(id),
  });
  t.after(() => repository.close().catch(() => {}));
  const start = createTestStart({ id: "req_disk_full", workspaceId: workspace.id, apiKeyId: key.id });

  await repository.finish("req_disk_full", outcome(300), start);
  assert.deepEqual(journalErrors, ["req_disk_full"]);
  assert.equal((await repository.get("req_disk_full", workspace.id))?.status, "ok", "final from memory");
  await repository.drain();
  const stored = await createGenerationRepository(context.sql).get("req_disk_full", workspace.id);
  assert.equal(stored?.status, "ok");
  assert.equal(stored?.costMicroUsd, 300);
});

test("an embedded data folder of an earlier version with parked outcomes: they are written once before serving, then the outbox is empty", async (t) => {
  if (!(await requireMode(t, "embedded"))) return;
  const dataDir = await temporaryFolder(t, "earlier-outbox-");
  let workspaceId: string;
  const ids = ["req_parked_1", "req_parked_2"];
  {
    const { store } = await openStoreWithSqlClient({ dataDir });
    const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 10_000, invoicing: false });
    const { key } = await store.apiKeys.create({ workspaceId: workspace.id });
    workspaceId = workspace.id;
    await store.close();
    // What an earlier version parked while its database was unavailable: outcomes with their starts.
    const outbox = await openFileOutcomeOutbox(join(dataDir, "outbox"));
    for (const id of ids) {
      await outbox.park({
        id,
        outcome: outcome(700),
        start: createTestStart(
          { id, workspaceId: workspace.id, apiKeyId: key.id },
          { createdAt: new Date("2026-11-22T06:00:00.000Z") },
        ),
        parkedAt: new Date().toISOString(),
      });
    }
    await outbox.close();
  }
  for (let opening = 1; opening <= 2; opening++) {
    const { store, client } = await openStoreWithSqlClient({ dataDir });
    try {
      const recorder = await openUsageRecorder(store, { dataDir, state: await openSharedState({}) });
      for (const id of ids) assert.equal((await store.generations.get(id, workspaceId))?.status, "ok", id);
      assert.equal(
        (await store.workspaces.get(workspaceId))?.balanceMicroUsd,
        10_000 - 2 * 700,
        `opening ${opening}`,
      );
      const [ledger] = await client.query<{ lines: string }>(
        "SELECT count(*) AS lines FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'",
        [workspaceId],
      );
      assert.equal(Number(ledger.lines), 2, `debited once each, opening ${opening}`);
      const left = await readdir(join(dataDir, "outbox")).catch(() => [] as string[]);
      assert.ok(
        !left.some((name) => name === "pending.jsonl" || name.startsWith("replaying-")),
        `nothing left to replay: ${left}`,
      );
      await recorder.close();
    } finally {
      await store.close();
    }
  }
});
