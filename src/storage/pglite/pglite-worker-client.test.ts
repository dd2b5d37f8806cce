import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Worker } from "node:worker_threads";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import { isPermanentDatabaseError } from "../sql/classify-database-error.js";
import type { SqlClient } from "../sql/sql-client.js";
import { PGLITE_SETTINGS } from "./pglite-client.js";
import { createPgliteWorkerClient } from "./pglite-worker-client.js";

let client: SqlClient;
before(async () => {
  client = await createPgliteWorkerClient("memory://", PGLITE_SETTINGS);
  await client.executeScript(
    "CREATE TABLE items (id TEXT PRIMARY KEY, amount BIGINT NOT NULL, at TIMESTAMPTZ)",
  );
});
after(() => client.close());

test("the worker's client: parameters, arrays, dates and integers go and come back as with PGlite", async () => {
  const at = new Date("2026-11-24T10:00:00.000Z");
  await client.query("INSERT INTO items SELECT * FROM unnest($1::text[], $2::bigint[], $3::timestamptz[])", [
    ["a", "b"],
    [5, 7],
    [at.toISOString(), at.toISOString()],
  ]);
  const rows = await client.query<{ id: string; amount: number; at: Date }>(
    "SELECT id, amount, at FROM items WHERE id = ANY($1::text[]) ORDER BY id",
    [["a", "b"]],
  );
  assert.deepEqual(
    rows.map((row) => [row.id, Number(row.amount), row.at.toISOString()]),
    [
      ["a", 5, at.toISOString()],
      ["b", 7, at.toISOString()],
    ],
  );
});

test("the worker's client: a database error keeps its SQLSTATE, so it is classified as before", async () => {
  await assert.rejects(client.query("INSERT INTO items (id, amount) VALUES ('a', 1)"), (error: Error) => {
    assert.equal((error as Error & { code?: string }).code, "23505");
    assert.match(error.message, /duplicate key/);
    assert.ok(isPermanentDatabaseError(error));
    return true;
  });
});

test("the worker's client: a transaction commits, or rolls back when its function throws; nesting joins it", async () => {
  await client.transaction(async (tx) => {
    await tx.query("INSERT INTO items (id, amount) VALUES ('t1', 1)");
    await tx.transaction((inner) => inner.query("INSERT INTO items (id, amount) VALUES ('t2', 2)"));
  });
  await assert.rejects(
    client.transaction(async (tx) => {
      await tx.query("INSERT INTO items (id, amount) VALUES ('t3', 3)");
      throw new Error("changed my mind");
    }),
    /changed my mind/,
  );
  const rows = await client.query<{ id: string }>("SELECT id FROM items WHERE id LIKE 't%' ORDER BY id");
  assert.deepEqual(
    rows.map((row) => row.id),
    ["t1", "t2"],
  );
});

test("the worker's client: a statement outside an open transaction waits for it to end", async () => {
  let releaseTransaction!: () => void;
  const held = new Promise<void>((resolve) => {
    releaseTransaction = resolve;
  });
  const transaction = client.transaction(async (tx) => {
    await tx.query("INSERT INTO items (id, amount) VALUES ('w1', 1)");
    await held;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  let outsideDone = false;
  const outside = client.query("SELECT count(*)::int AS n FROM items WHERE id = 'w1'").then((rows) => {
    outsideDone = true;
    return rows;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(outsideDone, false, "it waits while the transaction is open");
  releaseTransaction();
  await transaction;
  assert.deepEqual(await outside, [{ n: 1 }], "and then sees what the transaction committed");
});

test("the worker's client: a long statement does not stop the main thread's event loop", async () => {
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(performance.now()), 10);
  const startedAt = performance.now();
  // ~0.5 s of work inside the database.
  await client.query("SELECT count(*) FROM generate_series(1, 3000000)");
  const took = performance.now() - startedAt;
  clearInterval(timer);
  const gaps = ticks.slice(1).map((tick, index) => tick - ticks[index]);
  assert.ok(took > 100, `the statement took ${took.toFixed(0)} ms (too short to show anything)`);
  assert.ok(ticks.length >= took / 40, `${ticks.length} ticks in ${took.toFixed(0)} ms`);
  // Run on the main thread, the statement would be one pause as long as itself; a loaded machine
  // adds pauses of its own, so the bound is half the statement's time (at least 100 ms).
  const longest = Math.max(...gaps);
  assert.ok(
    longest < Math.max(100, took / 2),
    `longest pause of the main thread ${longest.toFixed(0)} ms of ${took.toFixed(0)} ms`,
  );
});

test("the worker's client: when the thread dies, waiting and later calls fail with an error instead of hanging", async () => {
  let thread: import("node:worker_threads").Worker | undefined;
  const doomed = await createPgliteWorkerClient("memory://", PGLITE_SETTINGS, (worker) => {
    thread = worker;
  });
  const waiting = doomed.query("SELECT pg_sleep(2)");
  await thread?.terminate();
  await assert.rejects(waiting, /the database worker exited/);
  await assert.rejects(doomed.query("SELECT 1"), /the database worker exited/);
  await doomed.close(); // Nothing left to close: resolves.
});

test("the worker's client: a database in a folder gets a new thread when its thread dies; calls fail at once meanwhile, and the data is there", async (t) => {
  const folder = await createTempDir("gw-pglite-restart-");
  const threads: Worker[] = [];
  const restarting = await createPgliteWorkerClient(join(folder.path, "db"), PGLITE_SETTINGS, (worker) => {
    threads.push(worker);
  });
  t.after(async () => {
    await restarting.close();
    await folder.cleanup();
  });
  await restarting.executeScript("CREATE TABLE kept (id TEXT PRIMARY KEY)");
  await restarting.query("INSERT INTO kept VALUES ('before the crash')");

  const waiting = restarting.query("SELECT pg_sleep(2)");
  await threads[0].terminate();
  await assert.rejects(waiting, /the database worker exited/);
  const startedAt = Date.now();
  await assert.rejects(restarting.query("SELECT 1"), /the database worker (exited|is restarting)/);
  assert.ok(Date.now() - startedAt < 100, "a call while it restarts fails at once");

  const rows = await waitUntil(async () => {
    try {
      return await restarting.query<{ id: string }>("SELECT id FROM kept");
    } catch {
      return undefined;
    }
  }, 30_000);
  assert.deepEqual(rows, [{ id: "before the crash" }]);
  assert.equal(threads.length, 2, "one new thread");
  await restarting.query("INSERT INTO kept VALUES ('after the restart')");
});

test("the worker's client: a database that cannot start rejects the client instead of hanging", async () => {
  await assert.rejects(
    createPgliteWorkerClient("memory://", { ...PGLITE_SETTINGS, shared_buffers: "not-a-size" }),
    (error: Error) => error instanceof Error && error.message.length > 0,
  );
});

async function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
