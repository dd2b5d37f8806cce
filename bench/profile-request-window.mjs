// A preload for same-run A/B profiles: samples the process's CPU (or, with
// PROFILE_WINDOW_KIND=heap, its allocations) over the same window of requests in each gateway,
// from request PROFILE_WINDOW_START (default 3000) for PROFILE_WINDOW_COUNT requests (default
// 10000), and writes <tmpdir>/window-<pid>.cpuprofile or .heapprofile with `requests` set, so
// per-request figures of two gateways compare directly. Use through BENCH_GATEWAY_NODE_OPTIONS
// and BENCH_BASELINE_NODE_OPTIONS="--import $PWD/bench/profile-request-window.mjs".
import { writeFileSync } from "node:fs";
import http from "node:http";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join } from "node:path";

const start = Number(process.env.PROFILE_WINDOW_START ?? 3000);
const count = Number(process.env.PROFILE_WINDOW_COUNT ?? 10000);
const heap = process.env.PROFILE_WINDOW_KIND === "heap";
const session = new Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );

async function begin() {
  if (heap) {
    await post("HeapProfiler.enable");
    await post("HeapProfiler.startSampling", {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else {
    await post("Profiler.enable");
    await post("Profiler.setSamplingInterval", { interval: 200 });
    await post("Profiler.start");
  }
}

async function end() {
  const { profile } = await post(heap ? "HeapProfiler.stopSampling" : "Profiler.stop");
  profile.requests = count;
  const file = join(tmpdir(), `window-${process.pid}.${heap ? "heapprofile" : "cpuprofile"}`);
  writeFileSync(file, JSON.stringify(profile));
}

let requests = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (name, ...args) {
  if (name === "request") {
    requests += 1;
    if (requests === start) void begin();
    if (requests === start + count) void end();
  }
  return emit.call(this, name, ...args);
};
