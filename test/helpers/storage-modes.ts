/**
 * Runs storage-dependent tests in every runtime mode: embedded PGlite and a real
 * PostgreSQL (a fresh database per test, dropped afterwards); in-process and real Redis (a random
 * key/channel prefix per test, cleaned afterwards). An unreachable server skips its variant with a
 * message locally, and fails the test when CI=true so a broken CI machine cannot pass silently.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { Redis } from "ioredis";
import pg from "pg";
import { createStore, openStoreWithSqlClient } from "../../src/storage/open-store.js";
import { PGLITE_SETTINGS, pgliteOptions, wrapPglite } from "../../src/storage/pglite/pglite-client.js";
import { openSharedState } from "../../src/storage/shared-state/shared-state.js";
import { migrate } from "../../src/storage/sql/migrate.js";
import type { SqlClient } from "../../src/storage/sql/sql-client.js";
import type { SharedState, Store } from "../../src/storage/store.js";

export type StorageMode = "embedded" | "postgres";
export type SharedStateMode = "in-process" | "redis";
export const STORAGE_MODES: readonly StorageMode[] = ["embedded", "postgres"];
export const SHARED_STATE_MODES: readonly SharedStateMode[] = ["in-process", "redis"];

/** A database of this server is used to create and drop the per-test databases. */
export const POSTGRES_ADMIN_URL =
  process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let postgresProbe: Promise<string | null> | undefined;
let redisProbe: Promise<string | null> | undefined;

/** null when reachable, else the reason to skip. */
function probePostgres(): Promise<string | null> {
  postgresProbe ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return null;
    } catch (error) {
      return `PostgreSQL not reachable at ${POSTGRES_ADMIN_URL} (${(error as Error).message}) — skipping`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return postgresProbe;
}

function probeRedis(): Promise<string | null> {
  redisProbe ??= (async () => {
    const client = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      connectTimeout: 2_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.ping();
      return null;
    } catch (error) {
      return `Redis not reachable at ${TEST_REDIS_URL} (${(error as Error).message}) — skipping`;
    } finally {
      client.disconnect();
    }
  })();
  return redisProbe;
}

/**
 * Returns false (after marking the test skipped) when the mode's server is unreachable; throws
 * instead under CI=true.
 */
export async function requireMode(t: TestContext, mode: StorageMode | SharedStateMode): Promise<boolean> {
  const reason = mode === "postgres" ? await probePostgres() : mode === "redis" ? await probeRedis() : null;
  if (reason === null) return true;
  if (process.env.CI === "true") throw new Error(reason.replace(" — skipping", " — required when CI=true"));
  t.skip(reason);
  return false;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database (`gw_test_<random>`). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gw_test_${randomBytes(6).toString("hex")}`;
  await runAdminStatement(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => runAdminStatement(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function runAdminStatement(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface TestStore {
  mode: StorageMode;
  store: Store;
  /** Direct SQL on the same database, to inspect tables the Store interface does not expose. */
  sql: SqlClient;
  /** Set in postgres mode. */
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

let embeddedSnapshot: Promise<Blob> | undefined;

/**
 * Booting PGlite runs initdb (seconds); loading a dump of an already migrated database takes under
 * one. Each test still gets its own in-memory database, restored from this per-process snapshot.
 */
function getEmbeddedSnapshot(): Promise<Blob> {
  embeddedSnapshot ??= (async () => {
    const database = await PGlite.create(pgliteOptions(PGLITE_SETTINGS));
    try {
      await migrate(wrapPglite(database));
      return await database.dumpDataDir("none");
    } finally {
      await database.close();
    }
  })();
  return embeddedSnapshot;
}

/** In embedded mode: in memory from a migrated snapshot, or `dataDir` opened by openStore. */
export async function createTestStore(
  mode: StorageMode,
  options: { dataDir?: string } = {},
): Promise<TestStore> {
  if (mode === "embedded" && options.dataDir) {
    const { store, client } = await openStoreWithSqlClient({ dataDir: options.dataDir });
    return { mode, store, sql: client, cleanup: () => store.close() };
  }
  if (mode === "embedded") {
    // The gateway's own settings (16 MB shared_buffers): the suite runs many of these at once.
    const client = wrapPglite(
      await PGlite.create({ ...pgliteOptions(PGLITE_SETTINGS), loadDataDir: await getEmbeddedSnapshot() }),
    );
    // Runs like openStore would; finds every migration applied already.
    await migrate(client);
    const store = createStore(client, "embedded");
    return { mode, store, sql: client, cleanup: () => store.close() };
  }
  const database = await createTestDatabase();
  try {
    const { store, client } = await openStoreWithSqlClient({ databaseUrl: database.url, dataDir: "unused" });
    return {
      mode,
      store,
      sql: client,
      databaseUrl: database.url,
      async cleanup() {
        await store.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Registers `title [embedded]` and `title [postgres]`, each with its own fresh store. */
export function forEachStorageMode(
  title: string,
  fn: (context: TestStore, t: TestContext) => Promise<void>,
): void {
  for (const mode of STORAGE_MODES) {
    test(`${title} [${mode}]`, async (t) => {
      if (!(await requireMode(t, mode))) return;
      const context = await createTestStore(mode);
      try {
        await fn(context, t);
      } finally {
        await context.cleanup();
      }
    });
  }
}

export interface TestSharedState {
  mode: SharedStateMode;
  state: SharedState;
  /** Redis only: the random prefix isolating this test's keys and channels. */
  prefix: string;
  /** Another SharedState on a separate connection with the same prefix (redis) or the same object. */
  openPeer(): Promise<SharedState>;
  cleanup(): Promise<void>;
}

export async function createTestSharedState(mode: SharedStateMode): Promise<TestSharedState> {
  if (mode === "in-process") {
    const state = await openSharedState({});
    return { mode, state, prefix: "", openPeer: async () => state, cleanup: () => state.close() };
  }
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const opened: SharedState[] = [];
  const open = async () => {
    const state = await openSharedState({ redisUrl: TEST_REDIS_URL, prefix });
    opened.push(state);
    return state;
  };
  const state = await open();
  return {
    mode,
    state,
    prefix,
    openPeer: open,
    async cleanup() {
      await Promise.all(opened.map((each) => each.close()));
      await deleteRedisKeys(prefix);
    },
  };
}

/** Deletes every key under `prefix` from the test Redis. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

/** Registers `title [in-process]` and `title [redis]`. */
export function forEachSharedStateMode(
  title: string,
  fn: (context: TestSharedState, t: TestContext) => Promise<void>,
): void {
  for (const mode of SHARED_STATE_MODES) {
    test(`${title} [${mode}]`, async (t) => {
      if (!(await requireMode(t, mode))) return;
      const context = await createTestSharedState(mode);
      try {
        await fn(context, t);
      } finally {
        await context.cleanup();
      }
    });
  }
}

/** A temporary folder removed by the returned cleanup. */
export async function createTempDir(label = "gw-test-"): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), label));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
