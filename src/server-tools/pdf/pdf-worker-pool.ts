/**
 * Worker threads that read PDFs, at most `maxWorkers` at once; more jobs wait in order. Each job
 * has a deadline that covers its wait: a job still queued at its deadline is dropped, a running
 * one has its thread terminated (the only way to stop PDF.js in the middle of a page), and a new
 * thread is started for the next job. A thread that runs out of its heap limit fails its job as
 * `too_complex` without touching the gateway's own heap. Idle threads exit after `idleMs`, and no
 * thread keeps the process alive while it has nothing to do.
 */
import { Worker } from "node:worker_threads";
import type { PdfPagesOutcome, PdfPagesRequest } from "./extract-pdf-pages.js";
import type { PdfWorkerJob, PdfWorkerReply } from "./pdf-worker-protocol.js";

export type PdfPoolOutcome =
  | PdfPagesOutcome
  | { ok: false; reason: "timeout" | "too_complex" | "aborted" | "internal"; detail: string };

export interface PdfWorkerPoolOptions {
  maxWorkers: number;
  workerMemoryMb: number;
  idleMs: number;
}

export interface PdfWorkerPool {
  /** Never rejects: every failure is an outcome. */
  run(
    request: PdfPagesRequest,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<PdfPoolOutcome>;
  /**
   * Resolves once a thread has PDF.js loaded (starting one if none is alive), so the first PDF
   * does not wait for a cold start; false when the thread failed to start.
   */
  prewarm(): Promise<boolean>;
  /** Threads alive now (busy or idle). */
  readonly threadCount: number;
  /** Stops every thread; queued and running jobs end as `internal`. */
  close(): Promise<void>;
}

interface Job {
  id: number;
  request: PdfPagesRequest;
  resolve(outcome: PdfPoolOutcome): void;
  timer: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
  slot?: Slot;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  job?: Job;
  idleTimer?: NodeJS.Timeout;
  gone: boolean;
  ready: boolean;
  /** Called with true when PDF.js is loaded, false when the thread ends first. */
  onReady: Array<(ready: boolean) => void>;
}

export function createPdfWorkerPool(options: PdfWorkerPoolOptions): PdfWorkerPool {
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function settle(job: Job, outcome: PdfPoolOutcome): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    job.resolve(outcome);
  }

  /** Ends a job early (deadline, abort): dropped from the queue, or its thread stopped. */
  function cancel(job: Job, outcome: PdfPoolOutcome): void {
    if (job.settled) return;
    const queued = queue.indexOf(job);
    if (queued >= 0) queue.splice(queued, 1);
    if (job.slot) retire(job.slot);
    settle(job, outcome);
    dispatch();
  }

  function retire(slot: Slot): void {
    if (slot.gone) return;
    slot.gone = true;
    clearTimeout(slot.idleTimer);
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    for (const notify of slot.onReady.splice(0)) notify(false);
    void slot.worker.terminate().catch(() => undefined);
  }

  function startSlot(): Slot {
    const worker = startPdfWorker(options.workerMemoryMb);
    const slot: Slot = { worker, gone: false, ready: false, onReady: [] };
    worker.on("message", (reply: PdfWorkerReply) => {
      if ("ready" in reply) {
        slot.ready = true;
        for (const notify of slot.onReady.splice(0)) notify(true);
        return;
      }
      const job = slot.job;
      // A reply racing the thread's termination belongs to a job already ended.
      if (slot.gone || !job || job.id !== reply.id) return;
      slot.job = undefined;
      worker.unref();
      settle(job, reply.outcome);
      slot.idleTimer = setTimeout(() => retire(slot), options.idleMs).unref();
      dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const job = slot.job;
      retire(slot);
      if (job) {
        settle(
          job,
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? { ok: false, reason: "too_complex", detail: "the worker ran out of memory" }
            : { ok: false, reason: "internal", detail: error.message },
        );
      }
      dispatch();
    });
    worker.on("exit", () => {
      const job = slot.job;
      retire(slot);
      if (job) settle(job, { ok: false, reason: "internal", detail: "the worker exited" });
      dispatch();
    });
    worker.unref();
    slots.push(slot);
    // An idle thread that was never used still exits.
    slot.idleTimer = setTimeout(() => retire(slot), options.idleMs).unref();
    return slot;
  }

  function dispatch(): void {
    while (queue.length > 0 && !closed) {
      let slot = slots.find((candidate) => !candidate.job && !candidate.gone);
      if (!slot) {
        if (slots.length >= options.maxWorkers) return;
        slot = startSlot();
      }
      const job = queue.shift()!;
      clearTimeout(slot.idleTimer);
      slot.job = job;
      job.slot = slot;
      slot.worker.ref();
      // A copy the thread owns: the caller's buffer may be a slice of a larger one, and a
      // transferred ArrayBuffer is detached here.
      const bytes = new Uint8Array(job.request.bytes);
      const message: PdfWorkerJob = {
        id: job.id,
        bytes,
        maxPages: job.request.maxPages,
        maxTextBytes: job.request.maxTextBytes,
      };
      slot.worker.postMessage(message, [bytes.buffer]);
    }
  }

  return {
    run(request, runOptions) {
      return new Promise<PdfPoolOutcome>((resolve) => {
        if (closed) {
          resolve({ ok: false, reason: "internal", detail: "the PDF reader is closed" });
          return;
        }
        if (runOptions.signal?.aborted) {
          resolve({ ok: false, reason: "aborted", detail: "cancelled before it started" });
          return;
        }
        const job: Job = {
          id: nextId++,
          request,
          resolve,
          settled: false,
          signal: runOptions.signal,
          timer: setTimeout(
            () =>
              cancel(job, {
                ok: false,
                reason: "timeout",
                detail: `not done within ${runOptions.timeoutMs} ms`,
              }),
            runOptions.timeoutMs,
          ),
        };
        if (runOptions.signal) {
          job.onAbort = () => cancel(job, { ok: false, reason: "aborted", detail: "cancelled" });
          runOptions.signal.addEventListener("abort", job.onAbort, { once: true });
        }
        queue.push(job);
        dispatch();
      });
    },
    prewarm() {
      if (closed) return Promise.resolve(false);
      if (slots.some((slot) => slot.ready)) return Promise.resolve(true);
      const slot = slots[0] ?? startSlot();
      // Someone waits for this thread: it keeps the process alive until it is ready.
      slot.worker.ref();
      return new Promise<boolean>((resolve) =>
        slot.onReady.push((ready) => {
          if (!slot.job && !slot.gone) slot.worker.unref();
          resolve(ready);
        }),
      );
    },
    get threadCount() {
      return slots.length;
    },
    async close() {
      closed = true;
      const pending = [...queue, ...slots.flatMap((slot) => (slot.job ? [slot.job] : []))];
      queue.length = 0;
      const workers = slots.map((slot) => slot.worker);
      for (const slot of [...slots]) retire(slot);
      for (const job of pending) {
        settle(job, { ok: false, reason: "internal", detail: "the PDF reader was closed" });
      }
      await Promise.all(workers.map((worker) => worker.terminate().catch(() => undefined)));
    },
  };
}

/** Under tsx (tests, the CLI) the entry is TypeScript: a worker does not inherit tsx's hooks. */
function startPdfWorker(workerMemoryMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: workerMemoryMb };
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./pdf-worker-main.js", import.meta.url), { resourceLimits });
  }
  const entry = new URL("./pdf-worker-main.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, resourceLimits });
}
