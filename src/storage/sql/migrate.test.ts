import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createTempDir,
  createTestDatabase,
  forEachStorageMode,
  POSTGRES_ADMIN_URL,
  requireMode,
} from "../../../test/helpers/storage-modes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { openStore, openStoreWithSqlClient } from "../open-store.js";
import { createPostgresClient } from "../postgres/postgres-client.js";
import { migrate, readMigrations } from "./migrate.js";

forEachStorageMode("migrations are recorded once and re-running applies nothing", async ({ sql }) => {
  const files = (await readMigrations()).map((migration) => migration.name);
  assert.ok(files.length > 0 && files[0] === "0001-initial.sql");
  const recorded = await sql.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
  assert.deepEqual(
    recorded.map((row) => row.name),
    files,
  );
  assert.deepEqual(await migrate(sql), []);
  assert.deepEqual(await migrate(sql), []);
});

forEachStorageMode("a failing migration rolls back completely", async ({ sql }) => {
  const broken = [
    { name: "9998-good.sql", sql: "CREATE TABLE should_vanish (id int);" },
    {
      name: "9999-bad.sql",
      sql: "CREATE TABLE also_vanishes (id int); SELECT no_such_column FROM should_vanish;",
    },
  ];
  await assert.rejects(migrate(sql, broken), /Migration 9999-bad\.sql failed/);
  const tables = await sql.query(
    "SELECT 1 FROM information_schema.tables WHERE table_name = 'should_vanish'",
  );
  assert.equal(tables.length, 0);
  const recorded = await sql.query("SELECT 1 FROM schema_migrations WHERE name LIKE '999%'");
  assert.equal(recorded.length, 0);
});

test("two instances opening one PostgreSQL database at once apply migrations once", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  try {
    const opened = await Promise.all(
      [1, 2, 3].map(() => openStoreWithSqlClient({ databaseUrl: database.url, dataDir: "unused" })),
    );
    try {
      const rows = await opened[0].client.query<{ name: string; count: unknown }>(
        "SELECT name, count(*) AS count FROM schema_migrations GROUP BY name",
      );
      assert.equal(rows.length, (await readMigrations()).length);
      for (const row of rows) assert.equal(Number(row.count), 1);
      for (const { store } of opened) await store.ping();
    } finally {
      await Promise.all(opened.map(({ store }) => store.close()));
    }
  } finally {
    await database.drop();
  }
});

test("an embedded data folder persists across reopen and is locked while open", async () => {
  const folder = await createTempDir();
  try {
    const first = await openStore({ dataDir: folder.path });
    const workspace = await first.workspaces.create({ name: "kept", creditsMicroUsd: 42, invoicing: false });
    await assert.rejects(openStore({ dataDir: folder.path }), /already open in this process/);
    await first.close();

    const second = await openStore({ dataDir: folder.path });
    try {
      assert.equal(second.mode, "embedded");
      assert.equal((await second.workspaces.get(workspace.id))?.balanceMicroUsd, 42);
    } finally {
      await second.close();
    }
  } finally {
    await folder.cleanup();
  }
});

test("an embedded data folder locked by another live process is refused", async () => {
  const folder = await createTempDir();
  try {
    const { writeFile } = await import("node:fs/promises");
    // The parent of this test process is alive and is not us.
    await writeFile(`${folder.path}/pglite.lock`, String(process.ppid));
    await assert.rejects(openStore({ dataDir: folder.path }), /in use by process/);
    // A lock left by a dead process is taken over.
    await writeFile(`${folder.path}/pglite.lock`, "2147483646");
    const store = await openStore({ dataDir: folder.path });
    await store.close();
  } finally {
    await folder.cleanup();
  }
});

test("every PostgreSQL statement has a deadline", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  const client = createPostgresClient(database.url, { statementTimeoutMs: 300 });
  try {
    const started = Date.now();
    await assert.rejects(
      client.query("SELECT pg_sleep(5)"),
      (error) => (error as { code?: string }).code === "57014",
    );
    assert.ok(Date.now() - started < 3_000);
    await assert.rejects(
      client.transaction((tx) => tx.query("SELECT pg_sleep(5)")),
      (error) => (error as { code?: string }).code === "57014",
    );
    assert.deepEqual(await client.query("SELECT 1 AS ok"), [{ ok: 1 }], "the pool recovers");
  } finally {
    await client.close();
    await database.drop();
  }
});

test("opening an unreachable PostgreSQL fails with a clear, password-free message (the admin CLI)", async () => {
  await assert.rejects(
    openStore({ databaseUrl: "postgres://user:secret-pw@127.0.0.1:1/db", dataDir: "unused" }),
    (error) =>
      /Could not open PostgreSQL at postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/db/.test(
        (error as Error).message,
      ) && !(error as Error).message.includes("secret-pw"),
  );
});

test("a gateway's store opens while PostgreSQL is unreachable: it is down, and says so at once", async () => {
  const changes: Array<{ available: boolean; cause?: unknown }> = [];
  const store = await openStore({
    databaseUrl: "postgres://user:secret-pw@127.0.0.1:1/db",
    dataDir: "unused",
    openWhileUnreachable: true,
    onAvailabilityChange: (available, cause) => changes.push({ available, cause }),
  });
  try {
    assert.equal(changes[0]?.available, false);
    assert.equal(String((changes[0]?.cause as Error)?.message).includes("secret-pw"), false);
    await assert.rejects(store.ping());
    const startedAt = Date.now();
    await assert.rejects(store.workspaces.get("ws_x"), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, "rate_limit_exceeded");
      assert.equal(error.retryAfterSeconds, 5);
      assert.equal(error.message.includes("secret-pw"), false);
      return true;
    });
    assert.ok(Date.now() - startedAt < 100, "a store that is down answers without trying");
  } finally {
    await store.close();
  }
});

test("a PostgreSQL that answers but refuses the database fails the start with a clear, password-free message", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const url = new URL(POSTGRES_ADMIN_URL);
  url.password = "secret-pw";
  url.pathname = "/gw_no_such_database";
  await assert.rejects(openStore({ databaseUrl: url.toString(), dataDir: "unused" }), (error) => {
    const message = (error as Error).message;
    return (
      /Could not open PostgreSQL at postgres:\/\/.*:\*\*\*@/.test(message) && !message.includes("secret-pw")
    );
  });
});
