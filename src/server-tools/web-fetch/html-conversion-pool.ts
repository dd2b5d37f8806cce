/**
 * Runs HTML → markdown conversions on a pool of worker threads (html-conversion-worker.ts), so a
 * page costs a worker's time, never the request thread's, and no caller can take the pool from
 * the others:
 *
 * - Each job belongs to an owner (the API key). Owners take turns: a free worker takes the oldest
 *   job of the owner served least recently (one just arrived first), so an owner with many pages
 *   waiting delays another's page by at most one turn, not by all of its pages.
 * - An owner has at most `perKeyRunning` workers (fewer than the pool by default, so another
 *   owner always finds one) and `perKeyQueued` jobs waiting; one more is refused at once (`busy`).
 * - A running job past its deadline (`timeoutMs`, or the time its caller has left) is stopped by
 *   terminating its worker (`timeout`), the only way to end a synchronous conversion. A fresh
 *   worker takes its place at once; until it is ready it still counts against the owner whose page
 *   cost the old one, so pathological pages cannot turn worker restarts into a free share of the
 *   pool. A job still waiting when its caller's time is up ends with `expired`.
 * - A worker's heap is capped, so a page that needs more ends its job with `failed` instead of
 *   growing the process.
 *
 * All workers start with the first conversion and are kept warm; idle ones do not keep the
 * process alive.
 */
import { Worker } from "node:worker_threads";
import {
  defaultHtmlConversionSettings,
  type HtmlConversionSettings,
} from "../../config/server-tools/html-conversion-config.js";
import type { ConversionReply, ConversionRequest } from "./html-conversion-worker.js";
import type { PageMarkdown } from "./html-to-markdown.js";

export type HtmlConversionFailure =
  /** Ran past its deadline; its worker was terminated. */
  | "timeout"
  /** Waited for a worker until its caller's time was up. */
  | "expired"
  /** Its owner already had `perKeyQueued` jobs waiting. */
  | "busy"
  /** The worker failed on the page (an error, the heap cap). */
  | "failed"
  /** Its caller gave up (the request was cancelled) while it waited. */
  | "aborted"
  /** The converter was closed. */
  | "closed";

export type HtmlConversion =
  | ({ ok: true; cut: boolean } & PageMarkdown)
  | { ok: false; reason: HtmlConversionFailure; message: string };

export interface HtmlConversionJob {
  html: Uint8Array;
  charset: string | null;
  pageUrl: string;
  /** Whose page this is (the API key's id); jobs are shared out between owners. */
  owner: string;
  /** Time left for waiting and converting together (the rest of the fetch's deadline). */
  timeoutMs: number;
  /** The request's: a page still waiting when it aborts is dropped (a running one runs out). */
  signal?: AbortSignal;
}

export interface HtmlConverterStats {
  /** Conversions asked for since the start. */
  submitted: number;
  workers: number;
  ready: number;
  running: number;
  queued: number;
  /** Workers terminated because their conversion ran past its deadline, since the start. */
  killed: number;
}

export interface HtmlConverter {
  convert(job: HtmlConversionJob): Promise<HtmlConversion>;
  stats(): HtmlConverterStats;
  /** Terminates the workers; waiting and running jobs end with `closed`. */
  close(): Promise<void>;
}

interface Lane {
  owner: string;
  waiting: Job[];
  /** When a job of this owner last started (a dispatch count); 0 when none has. */
  lastServed: number;
  /** Workers this owner holds: running its jobs, or restarting after one of them. */
  holding: number;
}

interface Job {
  id: number;
  lane: Lane;
  request: ConversionRequest;
  deadlineAt: number;
  timer: NodeJS.Timeout | undefined;
  settle(result: HtmlConversion): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | undefined;
  /** The owner a restart is charged to, until the new worker is ready. */
  restartFor: Lane | undefined;
}

const ABORTED: HtmlConversion = { ok: false, reason: "aborted", message: "the request was cancelled" };

/** How long a worker that failed to start waits before the next attempt. */
const RESTART_BACKOFF_MS = 1000;

export function createHtmlConverter(options: Partial<HtmlConversionSettings> = {}): HtmlConverter {
  const defaults = defaultHtmlConversionSettings();
  const workers = Math.max(1, options.workers ?? defaults.workers);
  const settings: HtmlConversionSettings = {
    workers,
    timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
    maxBytes: options.maxBytes ?? defaults.maxBytes,
    maxDepth: options.maxDepth ?? defaults.maxDepth,
    maxElements: options.maxElements ?? defaults.maxElements,
    perKeyRunning: Math.min(workers, options.perKeyRunning ?? Math.max(1, workers - 1)),
    perKeyQueued: options.perKeyQueued ?? defaults.perKeyQueued,
    maxHeapMb: options.maxHeapMb ?? defaults.maxHeapMb,
  };
  const slots: Slot[] = [];
  const lanes = new Map<string, Lane>();
  let dispatched = 0;
  let queued = 0;
  let killed = 0;
  let nextId = 1;
  let closed = false;

  function spawnInto(slot: Slot | undefined): Slot {
    const worker = startWorker(settings.maxHeapMb);
    worker.unref();
    const target = slot ?? { worker, ready: false, job: undefined, restartFor: undefined };
    target.worker = worker;
    target.ready = false;
    target.job = undefined;
    worker.on("message", (reply: ConversionReply) => {
      if (target.worker !== worker) return;
      if ("ready" in reply) {
        target.ready = true;
        release(target);
        pump();
        return;
      }
      const job = target.job;
      if (job === undefined || reply.id !== job.id) return;
      target.job = undefined;
      worker.unref();
      job.lane.holding--;
      job.settle(
        reply.ok
          ? {
              ok: true,
              title: reply.title,
              markdown: reply.markdown,
              readable: reply.readable,
              cut: reply.cut,
            }
          : { ok: false, reason: "failed", message: reply.message },
      );
      forgetIfIdle(job.lane);
      pump();
    });
    const lost = (message: string) => {
      if (target.worker !== worker || closed) return;
      if (!target.ready) {
        // Failed to start: the restart's charge ends, and the next attempt waits a little
        // rather than spinning.
        release(target);
        setTimeout(() => {
          if (!closed && target.worker === worker) spawnInto(target);
        }, RESTART_BACKOFF_MS).unref();
        return;
      }
      const job = target.job;
      restart(target);
      job?.settle({ ok: false, reason: "failed", message });
      pump();
    };
    worker.on("error", (error) => lost(error.message));
    worker.on("exit", (code) => lost(`conversion worker exited (${code})`));
    return target;
  }

  /**
   * Replaces a slot's worker. The owner of the job it was running holds the slot until the new
   * worker is ready: its share passes from the job to the restart.
   */
  function restart(slot: Slot): void {
    const old = slot.worker;
    release(slot);
    slot.restartFor = slot.job?.lane;
    slot.job = undefined;
    spawnInto(slot);
    void old.terminate();
  }

  /** Ends a restart's charge to its owner. */
  function release(slot: Slot): void {
    const owner = slot.restartFor;
    if (owner === undefined) return;
    slot.restartFor = undefined;
    owner.holding--;
    forgetIfIdle(owner);
  }

  function forgetIfIdle(lane: Lane): void {
    if (lane.waiting.length === 0 && lane.holding === 0) lanes.delete(lane.owner);
  }

  /** The owner whose turn it is: of those with a job waiting and a share left, the one served least recently. */
  function nextLane(): Lane | undefined {
    let next: Lane | undefined;
    for (const lane of lanes.values()) {
      if (lane.waiting.length === 0 || lane.holding >= settings.perKeyRunning) continue;
      if (next === undefined || lane.lastServed < next.lastServed) next = lane;
    }
    return next;
  }

  function pump(): void {
    while (!closed && queued > 0) {
      const slot = slots.find((candidate) => candidate.ready && candidate.job === undefined);
      if (slot === undefined) return;
      const lane = nextLane();
      if (lane === undefined) return;
      lane.lastServed = ++dispatched;
      const job = lane.waiting.shift()!;
      queued--;
      run(slot, job);
    }
  }

  function run(slot: Slot, job: Job): void {
    clearTimeout(job.timer);
    slot.job = job;
    job.lane.holding++;
    const runMs = Math.max(1, Math.min(settings.timeoutMs, job.deadlineAt - performance.now()));
    job.timer = setTimeout(() => {
      if (slot.job !== job) return;
      killed++;
      // The only way to stop a synchronous conversion is to end its thread.
      restart(slot);
      job.settle({ ok: false, reason: "timeout", message: "converting the page took too long" });
      pump();
    }, runMs);
    slot.worker.ref();
    // The page's own copy of its bytes moves to the worker rather than being copied again.
    slot.worker.postMessage(job.request, [job.request.html.buffer as ArrayBuffer]);
  }

  /** Ends a job that is still waiting; false when it has started (or ended). */
  function withdraw(job: Job, result: HtmlConversion): boolean {
    const index = job.lane.waiting.indexOf(job);
    if (index === -1) return false;
    job.lane.waiting.splice(index, 1);
    queued--;
    job.settle(result);
    forgetIfIdle(job.lane);
    return true;
  }

  return {
    convert(input) {
      if (closed) return Promise.resolve({ ok: false, reason: "closed", message: "converter closed" });
      if (input.signal?.aborted) return Promise.resolve(ABORTED);
      if (slots.length === 0) {
        for (let count = 0; count < settings.workers; count++) slots.push(spawnInto(undefined));
      }
      let lane = lanes.get(input.owner);
      if (lane === undefined) {
        lane = { owner: input.owner, waiting: [], lastServed: 0, holding: 0 };
        lanes.set(input.owner, lane);
      }
      const owner = lane;
      return new Promise<HtmlConversion>((resolve) => {
        const id = nextId++;
        let settled = false;
        const timeoutMs = Math.max(1, input.timeoutMs);
        const job: Job = {
          id,
          lane: owner,
          request: {
            id,
            // A copy of just these bytes: a waiting page does not keep the whole response alive.
            html: new Uint8Array(input.html),
            charset: input.charset,
            pageUrl: input.pageUrl,
            maxDepth: settings.maxDepth,
            maxElements: settings.maxElements,
          },
          deadlineAt: performance.now() + timeoutMs,
          timer: undefined,
          settle(result) {
            if (settled) return;
            settled = true;
            clearTimeout(job.timer);
            resolve(result);
          },
        };
        job.timer = setTimeout(
          () =>
            withdraw(job, { ok: false, reason: "expired", message: "the page waited too long for a worker" }),
          timeoutMs,
        );
        const signal = input.signal;
        if (signal !== undefined) {
          const onAbort = () => withdraw(job, ABORTED);
          signal.addEventListener("abort", onAbort, { once: true });
          const settle = job.settle;
          job.settle = (result) => {
            signal.removeEventListener("abort", onAbort);
            settle(result);
          };
        }
        owner.waiting.push(job);
        queued++;
        pump();
        // Still waiting, behind as many of its owner's as may wait: refused at once.
        if (owner.waiting.length > settings.perKeyQueued && owner.waiting.at(-1) === job) {
          owner.waiting.pop();
          queued--;
          job.settle({
            ok: false,
            reason: "busy",
            message: "too many pages of this key are waiting to be converted",
          });
          forgetIfIdle(owner);
        }
      });
    },
    stats() {
      return {
        submitted: nextId - 1,
        workers: slots.length,
        ready: slots.filter((slot) => slot.ready).length,
        running: slots.filter((slot) => slot.job !== undefined).length,
        queued,
        killed,
      };
    },
    async close() {
      closed = true;
      const message = "converter closed";
      for (const lane of lanes.values()) {
        for (const job of lane.waiting.splice(0)) job.settle({ ok: false, reason: "closed", message });
      }
      lanes.clear();
      queued = 0;
      const running = slots.splice(0);
      for (const slot of running) slot.job?.settle({ ok: false, reason: "closed", message });
      await Promise.all(running.map((slot) => slot.worker.terminate()));
    },
  };
}

let shared: HtmlConverter | undefined;

/** A process-wide converter with the default settings, for callers that bring none. */
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
