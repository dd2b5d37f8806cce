/**
 * The embedded side of the SQL seam (../sql/sql-client.ts): PGlite in this thread, or in a worker
 * thread (pglite-worker-client.ts), with the gateway's settings and periodic checkpoints.
 */
import { availableParallelism } from "node:os";
import { PGlite, type PGliteOptions, type Transaction as PgliteTransaction } from "@electric-sql/pglite";
import type { PgliteThreadSetting } from "../../config/settings.js";
import type { SqlClient, SqlParameter } from "../sql/sql-client.js";
import { createPreparedRunner } from "./pglite-prepared.js";
import { createPgliteWorkerClient } from "./pglite-worker-client.js";
import { limitWasmCompileTasks } from "./wasm-compile-tasks.js";

/**
 * PGlite is one connection to one backend, in this thread or its own (`thread`, PgliteThread
 * below; same semantics either way). It already runs `query`, `exec` and
 * `transaction` one at a time behind its own exclusive lock, so a transaction can never interleave
 * with another caller's statements; that lock is the mutex we rely on. Consequence: code inside a
 * transaction must use the `tx` it was given — calling the outer client there would wait forever.
 */
export async function createPgliteClient(
  dataDir: string,
  settings: Readonly<Record<string, string>> = PGLITE_SETTINGS,
  thread: PgliteThread = "main",
): Promise<SqlClient> {
  limitWasmCompileTasks();
  const client =
    thread === "worker"
      ? await createPgliteWorkerClient(dataDir, settings)
      : wrapPglite(await PGlite.create(dataDir, pgliteOptions(settings)));
  // Single-user Postgres never checkpoints by itself (no checkpointer process; max_wal_size and
  // checkpoint_timeout are not acted on), so pg_wal — in memory:// that is JS memory — grows with
  // every write until a clean close, and a crash replays all of it on the next start.
  const timer = setInterval(() => {
    checkpointIfDue(client).catch(() => {}); // Closing, or busy: the next tick tries again.
  }, CHECKPOINT_CHECK_INTERVAL_MS);
  timer.unref();
  return Object.assign({}, client, {
    async close() {
      clearInterval(timer);
      await client.close();
    },
  });
}

/**
 * Where the embedded database runs. PGlite executes statements synchronously, so on the main
 * thread every batch of usage records pauses request handling; in a worker thread
 * (pglite-worker-client.ts) it does not, and with a spare core it runs there. With two cores the
 * worker raises throughput and lowers the tail latency; confined to one core it still lowers the
 * tail but costs non-streamed throughput (the threads take turns on the core) and some RSS
 * (docs/decisions/0012-pglite-worker-thread.md). `auto` picks the worker when the process may use more than one
 * CPU (its affinity mask, so `taskset -c 0` counts as one).
 */
export type PgliteThread = "main" | "worker";

export function resolvePgliteThread(
  setting: PgliteThreadSetting,
  cpus = availableParallelism(),
): PgliteThread {
  if (setting !== "auto") return setting;
  return cpus > 1 ? "worker" : "main";
}

/**
 * Checkpoints come often and small: CHECKPOINT writes every buffer dirtied since the last one in a
 * single call, which holds the event loop when PGlite runs on the request thread. Pages dirtied
 * grow with the WAL written, up to all of shared_buffers; a few MB of WAL keep a checkpoint to a
 * few milliseconds instead of tens (docs/performance.md, "Pauses on the request thread"), and a
 * crash replays less. Checked every few seconds so a saturated gateway does not run far past it.
 */
const CHECKPOINT_CHECK_INTERVAL_MS = 2_000;
const CHECKPOINT_WAL_BYTES = 8 * 1024 * 1024;

/**
 * Runs CHECKPOINT when `walBytes` of WAL were written since the last one; true when it did. It
 * writes the dirty buffers (at most shared_buffers) to the OS and recycles old WAL segments; it
 * holds PGlite's lock while it runs, and the event loop too unless PGlite runs in its worker
 * thread (pglite-worker-client.ts).
 */
export async function checkpointIfDue(client: SqlClient, walBytes = CHECKPOINT_WAL_BYTES): Promise<boolean> {
  const [row] = await client.query<{ due: boolean }>(
    "SELECT pg_current_wal_insert_lsn() - redo_lsn >= $1 AS due FROM pg_control_checkpoint()",
    [walBytes],
  );
  if (!row?.due) return false;
  await client.executeScript("CHECKPOINT");
  return true;
}

/**
 * Postgres settings of the embedded database (measurements: docs/pglite-tuning.md). They go on
 * PGlite's command line at every start, so they also apply to data folders created before they
 * existed; the postgresql.conf that initdb wrote is left alone.
 *
 * Durability stays as it was: every COMMIT writes its WAL into the OS (pwrite, page cache) before
 * PGlite answers, so a crash of the process loses nothing that was acknowledged. PGlite runs
 * Postgres with fsync off (`-F`) and its Node file system has no fsync at all, so an OS crash or
 * power loss could lose recent commits with or without these settings.
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  // Postgres' 128MB default is allocated and initialised inside PGlite's WASM memory at start,
  // which never shrinks (docs/decisions/0041-pglite-settings.md), for a database whose hot set (workspaces, keys, the tail
  // of generations and ledger_entries) is a few MB. Reads beyond the buffers hit the OS page cache.
  shared_buffers: "16MB",
  // How much WAL a checkpoint keeps for reuse (checkpointIfDue runs checkpoints; single-user
  // Postgres would not): pg_wal stays under ~100 MB instead of up to 1 GB of recycled segments.
  // With memory:// these files are JS memory.
  max_wal_size: "64MB",
  min_wal_size: "32MB",
};

/** PGlite's own start parameters (single-user mode, `-F`, no workers…) plus `settings`. */
export function pgliteOptions(settings: Readonly<Record<string, string>>): PGliteOptions {
  const flags = Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  return {
    startParams: [...PGlite.defaultStartParams, ...flags],
    // initdb (first start only) runs Postgres too: the same settings lower its peak a little and
    // are written into the new folder's postgresql.conf.
    initDbStartParams: flags,
  };
}

/** Adopts an open PGlite instance (tests start from a pre-migrated snapshot this way). */
export function wrapPglite(database: PGlite): SqlClient {
  const wrapTransaction = (tx: PgliteTransaction): SqlClient => {
    const client: SqlClient = {
      async query<T>(text: string, params: readonly SqlParameter[] = []) {
        return (await tx.query<T>(text, params as unknown[])).rows;
      },
      async run(text, params) {
        await tx.query(text, params as unknown[]);
      },
      async executeScript(text) {
        await tx.exec(text);
      },
      transaction: (fn) => fn(client),
      close: async () => {},
    };
    return client;
  };

  return {
    async query<T>(text: string, params: readonly SqlParameter[] = []) {
      return (await database.query<T>(text, params as unknown[])).rows;
    },
    run: createPreparedRunner(database),
    async executeScript(text) {
      await database.exec(text);
    },
    transaction: (fn) => database.transaction((tx) => fn(wrapTransaction(tx))),
    async close() {
      if (!database.closed) await database.close();
    },
  };
}
