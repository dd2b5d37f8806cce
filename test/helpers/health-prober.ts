/**
 * Measures how long a gateway takes to answer `GET /healthz` while something else runs: a worker
 * thread asks every few milliseconds, one request at a time on one keep-alive connection, and
 * keeps the slowest answer. It runs in its own thread so that whatever the test's main thread is
 * busy with (building bodies, fake upstreams parsing what the gateway forwards) is not counted:
 * only the gateway's own delay is.
 */
import { Worker } from "node:worker_threads";

const PROBE_SCRIPT = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
// Linux sets a thread's priority: this thread's own, where permitted (it is measuring, not measured).
if (workerData.raisePriority) {
  try {
    require("node:os").setPriority(0, -10);
  } catch {}
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let running = false;
let slowest = 0;
let probes = 0;
let inFlightSince;
function probe() {
  if (!running) return;
  const started = performance.now();
  inFlightSince = started;
  const done = () => {
    inFlightSince = undefined;
    slowest = Math.max(slowest, performance.now() - started);
    probes++;
    setTimeout(probe, workerData.intervalMs);
  };
  const request = http.get(workerData.url + "/healthz", { agent, timeout: 60000 }, (response) => {
    response.resume();
    response.on("end", done);
  });
  request.on("error", done);
}
parentPort.on("message", (message) => {
  if (message === "start") {
    slowest = 0;
    probes = 0;
    running = true;
    probe();
  } else if (message === "stop") {
    running = false;
    // A probe still waiting on a stalled gateway counts with how long it has waited so far.
    if (inFlightSince !== undefined) slowest = Math.max(slowest, performance.now() - inFlightSince);
    parentPort.postMessage({ slowestMs: slowest, probes });
  } else if (message === "close") {
    agent.destroy();
    parentPort.close();
  }
});
`;

export interface HealthProbe {
  /** Runs `work` while probing; returns its result and the slowest `/healthz` answer meanwhile. */
  during<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number; probes: number }>;
  close(): Promise<void>;
}

/** `raisePriority`: run the probing thread at a raised scheduling priority where permitted. */
export function startHealthProbe(
  url: string,
  options: { intervalMs?: number; raisePriority?: boolean } = {},
): HealthProbe {
  const intervalMs = options.intervalMs ?? 10;
  const worker = new Worker(PROBE_SCRIPT, {
    eval: true,
    workerData: { url, intervalMs, raisePriority: options.raisePriority ?? false },
  });
  const stopped = () =>
    new Promise<{ slowestMs: number; probes: number }>((resolve) => worker.once("message", resolve));
  return {
    async during(work) {
      worker.postMessage("start");
      const outcome = await work().then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      // Let a probe sent just before the end come back; one still out counts as it stands.
      await new Promise((resolve) => setTimeout(resolve, 3 * intervalMs));
      const answer = stopped();
      worker.postMessage("stop");
      const measured = await answer;
      if ("error" in outcome) throw outcome.error;
      return { result: outcome.result, ...measured };
    },
    async close() {
      worker.postMessage("close");
      await worker.terminate();
    },
  };
}
