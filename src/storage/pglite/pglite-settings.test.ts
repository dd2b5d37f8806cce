/**
 * The embedded database's Postgres settings (docs/pglite-tuning.md): in effect on data folders
 * created before them and in memory, and no weaker on durability than PGlite's defaults: what was
 * written before a close is there after reopening, and what was acknowledged before the process
 * was killed is there too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { runUntilKilled } from "../../../test/helpers/killed-child.js";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import { IN_MEMORY_DATA_DIR, openStoreWithSqlClient } from "../open-store.js";
import type { SqlClient } from "../sql/sql-client.js";
import { checkpointIfDue, createPgliteClient, PGLITE_SETTINGS } from "./pglite-client.js";

async function show(client: SqlClient, name: string): Promise<string> {
  const [row] = await client.query<Record<string, string>>(`SHOW ${name}`);
  return Object.values(row)[0];
}

async function assertSettingsInEffect(client: SqlClient): Promise<void> {
  for (const [name, value] of Object.entries(PGLITE_SETTINGS)) {
    assert.equal(await show(client, name), value, name);
  }
  // PGlite's own start parameters are kept next to ours (single-user mode, no background workers).
  assert.equal(await show(client, "max_worker_processes"), "0");
  // Each COMMIT writes its WAL before PGlite answers: the guarantee against a process crash.
  assert.equal(await show(client, "synchronous_commit"), "on");
}

async function readNotes(client: SqlClient): Promise<string[]> {
  const rows = await client.query<{ note: string }>("SELECT note FROM settings_probe ORDER BY id");
  return rows.map((row) => row.note);
}

describe("embedded PGlite settings on a data folder", () => {
  let folder: { path: string; cleanup(): Promise<void> };
  let pgliteDir: string;

  before(async () => {
    folder = await createTempDir("gw-pglite-settings-");
    pgliteDir = join(folder.path, "pglite");
    // Created the way the gateway did before the settings existed: initdb wrote PGlite's defaults
    // (shared_buffers = 128MB) into postgresql.conf.
    const old = await PGlite.create(pgliteDir);
    await old.exec("CREATE TABLE settings_probe (id int PRIMARY KEY, note text NOT NULL)");
    await old.query("INSERT INTO settings_probe VALUES (1, 'before the settings')");
    await old.close();
  });

  after(async () => {
    await folder.cleanup();
  });

  test("apply to an existing folder, and rows written before a close are there after reopening", async () => {
    const { store, client } = await openStoreWithSqlClient({ dataDir: folder.path });
    try {
      await assertSettingsInEffect(client);
      assert.deepEqual(await readNotes(client), ["before the settings"]);
      await client.query("INSERT INTO settings_probe VALUES (2, 'with the settings')");
      await client.transaction(async (tx) => {
        await tx.query("INSERT INTO settings_probe VALUES (3, 'in a transaction')");
      });
    } finally {
      await store.close();
    }
    const reopened = await createPgliteClient(pgliteDir);
    try {
      await assertSettingsInEffect(reopened);
      assert.deepEqual(await readNotes(reopened), [
        "before the settings",
        "with the settings",
        "in a transaction",
      ]);
    } finally {
      await reopened.close();
    }
  });

  test("a killed process loses no acknowledged commit", async () => {
    const sqlClientUrl = new URL("./pglite-client.ts", import.meta.url).href;
    // The child commits rows one by one, reports each after PGlite acknowledged it, then dies
    // without closing (SIGKILL: no shutdown checkpoint, no flush on exit).
    const childSource = `
      import { createPgliteClient } from ${JSON.stringify(sqlClientUrl)};
      const client = await createPgliteClient(${JSON.stringify(pgliteDir)});
      for (let id = 100; id < 150; id++) {
        await client.query("INSERT INTO settings_probe VALUES ($1, 'acknowledged')", [id]);
        process.stdout.write(id + "\\n");
      }
      await client.transaction(async (tx) => {
        await tx.query("INSERT INTO settings_probe VALUES (150, 'acknowledged')");
        await tx.query("INSERT INTO settings_probe VALUES (151, 'acknowledged')");
      });
      process.stdout.write("151\\n");
      process.kill(process.pid, "SIGKILL");
    `;
    const { stdout, stderr, signal } = await runUntilKilled(childSource);
    assert.equal(signal, "SIGKILL", stderr);
    const acknowledged = stdout.trim().split("\n").map(Number);
    assert.equal(acknowledged.length, 51, stdout);

    const reopened = await createPgliteClient(pgliteDir);
    try {
      const rows = await reopened.query<{ id: number }>(
        "SELECT id FROM settings_probe WHERE note = 'acknowledged' ORDER BY id",
      );
      assert.deepEqual(
        rows.map((row) => row.id),
        Array.from({ length: 52 }, (_, i) => 100 + i),
      );
    } finally {
      await reopened.close();
    }
  });
});

test("an in-memory database gets the same settings, and checkpoints once enough WAL was written", async () => {
  const client = await createPgliteClient(IN_MEMORY_DATA_DIR);
  try {
    await assertSettingsInEffect(client);
    const redo = async () =>
      (await client.query<{ redo: string }>("SELECT redo_lsn::text AS redo FROM pg_control_checkpoint()"))[0]
        .redo;
    const before = await redo();
    await client.executeScript(
      "CREATE TABLE wal_filler (id int, pad text); INSERT INTO wal_filler SELECT g, repeat('x', 200) FROM generate_series(1, 8000) g",
    );
    assert.equal(await checkpointIfDue(client), false, "far below the default threshold");
    assert.equal(await redo(), before, "single-user Postgres did not checkpoint by itself");
    assert.equal(await checkpointIfDue(client, 1024 * 1024), true);
    const after = await redo();
    assert.notEqual(after, before);
    assert.equal(await checkpointIfDue(client, 1024 * 1024), false, "nothing written since");
    assert.equal(await redo(), after);
  } finally {
    await client.close();
  }
});
