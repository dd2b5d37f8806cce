/**
 * The worker thread that owns an embedded database (pglite-worker-client.ts): PGlite runs its
 * statements synchronously, so on the main thread every batch of usage records paused request
 * handling for its whole duration. Here it answers one message per statement; a transaction holds
 * PGlite's lock from `begin` to `end`, and statements tagged with its id run inside it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { pgliteOptions } from "./pglite-client.js";
import { createPreparedRunner } from "./pglite-prepared.js";
import { serializeError, type WorkerReply, type WorkerRequest } from "./pglite-worker-protocol.js";
import { limitWasmCompileTasks } from "./wasm-compile-tasks.js";

const ROLLBACK = Symbol("rollback");

async function serve(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error("pglite-worker-main runs as a worker thread");
  const { dataDir, settings } = workerData as { dataDir: string; settings: Record<string, string> };
  let database: PGlite;
  try {
    limitWasmCompileTasks();
    database = await PGlite.create(dataDir, pgliteOptions(settings));
  } catch (error) {
    port.postMessage({ failed: serializeError(error) } satisfies WorkerReply);
    return;
  }
  const runPrepared = createPreparedRunner(database);
  const open = new Map<number, { tx: Transaction; end(commit: boolean): void; done: Promise<void> }>();

  const target = (tx: number | undefined) => {
    if (tx === undefined) return database;
    const entry = open.get(tx);
    if (!entry) throw new Error(`transaction ${tx} is not open`);
    return entry.tx;
  };

  async function run(request: WorkerRequest): Promise<unknown> {
    switch (request.op) {
      case "query":
        return (await target(request.tx).query(request.text, request.params)).rows;
      case "run":
        // Inside a transaction a plain query: the prepared path takes the locks the transaction holds.
        if (request.tx === undefined) await runPrepared(request.text, request.params);
        else await target(request.tx).query(request.text, request.params);
        return null;
      case "exec":
        await target(request.tx).exec(request.text);
        return null;
      case "begin": {
        let opened!: () => void;
        const isOpen = new Promise<void>((resolve) => {
          opened = resolve;
        });
        const done = database
          .transaction(async (tx) => {
            const commit = await new Promise<boolean>((resolve) => {
              open.set(request.tx, { tx, end: resolve, done });
              opened();
            });
            if (!commit) throw ROLLBACK;
          })
          .catch((error: unknown) => {
            if (error !== ROLLBACK) throw error;
          })
          .finally(() => open.delete(request.tx));
        await Promise.race([isOpen, done]);
        return null;
      }
      case "end": {
        const entry = open.get(request.tx);
        if (!entry) throw new Error(`transaction ${request.tx} is not open`);
        entry.end(request.commit);
        await entry.done;
        return null;
      }
      case "close":
        if (!database.closed) await database.close();
        return null;
    }
  }

  port.on("message", (request: WorkerRequest) => {
    run(request).then(
      (result) => port.postMessage({ id: request.id, ok: true, result } satisfies WorkerReply),
      (error: unknown) =>
        port.postMessage({ id: request.id, ok: false, error: serializeError(error) } satisfies WorkerReply),
    );
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
}

await serve();
