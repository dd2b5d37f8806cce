/**
 * The embedded database in a worker thread, behind the same SqlClient seam as the in-process one.
 * PGlite executes statements synchronously: on the main thread a batch of usage records (and every
 * checkpoint) stopped request handling until it was done. In a worker the main thread keeps
 * serving meanwhile; on a machine with a spare core the database work runs there.
 *
 * Semantics are those of the in-process client (sql-client.ts): one connection, statements in
 * order, a transaction holds the database until it ends (other statements wait), and code inside
 * a transaction must use its `tx`. Errors keep their SQLSTATE `code`.
 */
import { Worker } from "node:worker_threads";
import { deserializeError, type WorkerReply, type WorkerRequest } from "./pglite-worker-protocol.js";
import type { SqlClient, SqlParameter } from "./sql-client.js";

type Pending = { resolve(value: unknown): void; reject(error: Error): void };
type Outgoing = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export async function createPgliteWorkerClient(
  dataDir: string,
  settings: Readonly<Record<string, string>>,
  /** Tests: the thread itself, to end it as a crash would. */
  onWorker?: (worker: Worker) => void,
): Promise<SqlClient> {
  const worker = startWorker({ dataDir, settings: { ...settings } });
  onWorker?.(worker);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let nextTx = 1;
  let failure: Error | undefined;

  await new Promise<void>((resolve, reject) => {
    const onMessage = (reply: WorkerReply) => {
      if ("ready" in reply) resolve();
      else if ("failed" in reply) reject(deserializeError(reply.failed));
    };
    worker.on("message", onMessage);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the database worker exited (${code}) while starting`)));
  });
  worker.removeAllListeners("message");
  worker.removeAllListeners("error");
  worker.removeAllListeners("exit");

  const failAll = (error: Error) => {
    failure ??= error;
    for (const entry of pending.values()) entry.reject(error);
    pending.clear();
  };
  worker.on("message", (reply: WorkerReply) => {
    if (!("id" in reply)) return;
    const entry = pending.get(reply.id);
    if (!entry) return;
    pending.delete(reply.id);
    if (reply.ok) entry.resolve(reply.result);
    else entry.reject(deserializeError(reply.error));
  });
  worker.on("error", (error) => failAll(error));
  worker.on("exit", (code) => failAll(new Error(`the database worker exited (${code})`)));

  const send = (request: Outgoing): Promise<unknown> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id } as WorkerRequest);
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
  return {
    ...root,
    async close() {
      if (failure) return;
      await send({ op: "close" });
      await worker.terminate();
    },
  };
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
