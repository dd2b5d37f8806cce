/**
 * The embedded database in a worker thread, behind the same SqlClient seam as the in-process one.
 * PGlite executes statements synchronously: on the main thread a batch of usage records (and every
 * checkpoint) stopped request handling until it was done. In a worker the main thread keeps
 * serving meanwhile; on a machine with a spare core the database work runs there.
 *
 * Semantics are those of the in-process client (pglite-client.ts): one connection, statements in
 * order, a transaction holds the database until it ends (other statements wait), and code inside
 * a transaction must use its `tx`. Errors keep their SQLSTATE `code`.
 *
 * If the thread dies, nothing waiting on it hangs: its calls fail, and a database kept in a folder
 * is reopened in a new thread (see `lost`).
 */
import { Worker } from "node:worker_threads";
import type { SqlClient, SqlParameter } from "../sql/sql-client.js";
import { deserializeError, type WorkerReply, type WorkerRequest } from "./pglite-worker-protocol.js";

type Pending = { resolve(value: unknown): void; reject(error: Error): void };
type Outgoing = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export async function createPgliteWorkerClient(
  dataDir: string,
  settings: Readonly<Record<string, string>>,
  /** Tests: each thread started (the first and every restart), to end it as a crash would. */
  onWorker?: (worker: Worker) => void,
): Promise<SqlClient> {
  const workerData = { dataDir, settings: { ...settings } };
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let nextTx = 1;
  /** Set for good: the thread died and cannot be replaced (an in-memory database is gone with it). */
  let failure: Error | undefined;
  let closing = false;
  let restartDelayMs = 0;
  let restartTimer: NodeJS.Timeout | undefined;

  const failAll = (error: Error) => {
    for (const entry of pending.values()) entry.reject(error);
    pending.clear();
  };

  /** Starts a thread and resolves once its database is open; rejects if it cannot start. */
  async function launch(): Promise<Worker> {
    const thread = startWorker(workerData);
    onWorker?.(thread);
    await new Promise<void>((resolve, reject) => {
      thread.on("message", (reply: WorkerReply) => {
        if ("ready" in reply) resolve();
        else if ("failed" in reply) reject(deserializeError(reply.failed));
      });
      thread.once("error", reject);
      thread.once("exit", (code) => reject(new Error(`the database worker exited (${code}) while starting`)));
    });
    thread.removeAllListeners("message");
    thread.removeAllListeners("error");
    thread.removeAllListeners("exit");
    thread.on("message", (reply: WorkerReply) => {
      if (!("id" in reply)) return;
      const entry = pending.get(reply.id);
      if (!entry) return;
      pending.delete(reply.id);
      if (reply.ok) entry.resolve(reply.result);
      else entry.reject(deserializeError(reply.error));
    });
    thread.on("error", (error) => lost(thread, error));
    thread.on("exit", (code) => lost(thread, new Error(`the database worker exited (${code})`)));
    return thread;
  }

  let worker: Worker | undefined = await launch();

  /**
   * The thread died. What waited on it fails (nothing hangs). A database in a folder gets a new
   * thread on the same files (PGlite recovers from its WAL, as after a crash); until it is up,
   * calls fail at once and the store counts the database as down. An in-memory one cannot come
   * back: every call fails from now on, and the instance stays unready.
   */
  function lost(thread: Worker, error: Error): void {
    if (thread !== worker) return;
    worker = undefined;
    failAll(error);
    if (closing) return;
    if (dataDir === "memory://") {
      failure = error;
      return;
    }
    scheduleRestart();
  }

  function scheduleRestart(): void {
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      launch().then(
        (thread) => {
          if (closing) {
            void thread.terminate();
            return;
          }
          worker = thread;
          restartDelayMs = 0;
        },
        () => {
          restartDelayMs = Math.min(Math.max(restartDelayMs * 2, 100), 5_000);
          if (!closing) scheduleRestart();
        },
      );
    }, restartDelayMs);
    restartTimer.unref();
  }

  const send = (request: Outgoing): Promise<unknown> => {
    if (failure) return Promise.reject(failure);
    const thread = worker;
    if (!thread) return Promise.reject(new Error("the database worker is restarting"));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      thread.postMessage({ id, ...request } as WorkerRequest);
    });
  };

  const clientFor = (tx: number | undefined): SqlClient => {
    const client: SqlClient = {
      async query<T>(text: string, params: readonly SqlParameter[] = []) {
        return (await send({ op: "query", text, params: [...params], tx })) as T[];
      },
      async run(text, params) {
        await send({ op: "run", text, params: [...params], tx });
      },
      async executeScript(text) {
        await send({ op: "exec", text, tx });
      },
      // Nested calls join the outer transaction, as in the other clients.
      transaction: tx === undefined ? runTransaction : (fn) => fn(client),
      close: async () => {},
    };
    return client;
  };

  async function runTransaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const tx = nextTx++;
    await send({ op: "begin", tx });
    let result: T;
    try {
      result = await fn(clientFor(tx));
    } catch (error) {
      await send({ op: "end", tx, commit: false }).catch(() => {});
      throw error;
    }
    await send({ op: "end", tx, commit: true });
    return result;
  }

  const root = clientFor(undefined);
  return Object.assign({}, root, {
    async close() {
      closing = true;
      clearTimeout(restartTimer);
      const thread = worker;
      if (!thread) return;
      await send({ op: "close" });
      await thread.terminate();
    },
  });
}

/** Under tsx (tests, the CLI) the worker's entry is TypeScript: a worker does not inherit tsx's hooks. */
function startWorker(workerData: { dataDir: string; settings: Record<string, string> }): Worker {
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./pglite-worker-main.js", import.meta.url), { workerData });
  }
  const entry = new URL("./pglite-worker-main.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
