/**
 * Runs HTML → markdown conversions on worker threads (html-conversion-worker.ts), so a large page
 * costs a worker's time, not the request thread's. Jobs queue for a free worker; each has a deadline
 * that counts its wait, and a job past it ends with `timeout` — a running one by terminating its
 * worker (the next job starts a fresh one). A worker's heap is capped, so a pathological page ends
 * its job with `failed` instead of growing the process. Idle workers do not keep the process alive.
 */
import { Worker } from "node:worker_threads";
import type { ConversionReply, ConversionRequest } from "./html-conversion-worker.js";
import type { PageMarkdown } from "./html-to-markdown.js";

export type HtmlConversion =
  | ({ ok: true } & PageMarkdown)
  | { ok: false; reason: "timeout" | "failed"; message: string };

export interface HtmlConverter {
  convert(
    html: Uint8Array,
    charset: string | null,
    pageUrl: string,
    timeoutMs: number,
  ): Promise<HtmlConversion>;
  /** Terminates the workers; queued and running jobs end with `failed`. */
  close(): Promise<void>;
}

export interface HtmlConverterOptions {
  /** Conversions running at once (default 1: one core's worth, the rest stays with requests). */
  maxWorkers?: number;
  /** Old-generation heap cap of each worker in MiB (default 512). */
  maxHeapMb?: number;
}

interface Job {
  id: number;
  request: ConversionRequest;
  timer: NodeJS.Timeout;
  settle(result: HtmlConversion): void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export function createHtmlConverter(options: HtmlConverterOptions = {}): HtmlConverter {
  const maxWorkers = options.maxWorkers ?? 1;
  const maxHeapMb = options.maxHeapMb ?? 512;
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const worker = startWorker(maxHeapMb);
    const slot: Slot = { worker, job: undefined };
    slots.add(slot);
    worker.unref();
    worker.on("message", (reply: ConversionReply) => {
      const job = slot.job;
      if (job === undefined || reply.id !== job.id) return;
      slot.job = undefined;
      worker.unref();
      job.settle(
        reply.ok
          ? { ok: true, title: reply.title, markdown: reply.markdown, readable: reply.readable }
          : { ok: false, reason: "failed", message: reply.message },
      );
      pump();
    });
    const retire = (message: string) => {
      if (!slots.delete(slot)) return;
      const job = slot.job;
      slot.job = undefined;
      job?.settle({ ok: false, reason: "failed", message });
      pump();
    };
    worker.on("error", (error) => retire(error.message));
    worker.on("exit", (code) => retire(`conversion worker exited (${code})`));
    return slot;
  }

  function pump(): void {
    while (queue.length > 0 && !closed) {
      let slot = [...slots].find((candidate) => candidate.job === undefined);
      if (slot === undefined && slots.size < maxWorkers) slot = spawn();
      if (slot === undefined) return;
      const job = queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage(job.request);
    }
  }

  function expire(job: Job): void {
    const queued = queue.indexOf(job);
    if (queued !== -1) queue.splice(queued, 1);
    for (const slot of slots) {
      if (slot.job !== job) continue;
      // The only way to stop a synchronous conversion is to end its thread.
      slots.delete(slot);
      slot.job = undefined;
      void slot.worker.terminate();
    }
    job.settle({ ok: false, reason: "timeout", message: "converting the page took too long" });
    pump();
  }

  return {
    convert(html, charset, pageUrl, timeoutMs) {
      if (closed) return Promise.resolve({ ok: false, reason: "failed", message: "converter closed" });
      return new Promise((resolve) => {
        const id = nextId++;
        let settled = false;
        const job: Job = {
          id,
          request: { id, html, charset, pageUrl },
          timer: setTimeout(() => expire(job), Math.max(1, timeoutMs)),
          settle(result) {
            if (settled) return;
            settled = true;
            clearTimeout(job.timer);
            resolve(result);
          },
        };
        queue.push(job);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0))
        job.settle({ ok: false, reason: "failed", message: "converter closed" });
      const running = [...slots];
      slots.clear();
      for (const slot of running)
        slot.job?.settle({ ok: false, reason: "failed", message: "converter closed" });
      await Promise.all(running.map((slot) => slot.worker.terminate()));
    },
  };
}

let shared: HtmlConverter | undefined;

/** The process-wide converter (one worker), started on first use. */
export function getSharedHtmlConverter(): HtmlConverter {
  shared ??= createHtmlConverter();
  return shared;
}

/** Under tsx (tests, the CLI) the entry is TypeScript: a worker does not inherit tsx's hooks. */
function startWorker(maxHeapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb };
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./html-conversion-worker.js", import.meta.url), { resourceLimits });
  }
  const entry = new URL("./html-conversion-worker.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, resourceLimits });
}
