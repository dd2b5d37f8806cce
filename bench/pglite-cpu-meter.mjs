/**
 * Preload for the gateway child: how much CPU PGlite's statements take inside a running gateway
 * (cold caches, real batch sizes), which a one-process measurement of PGlite alone understates.
 *
 *   BENCH_GATEWAY_NODE_OPTIONS="--import $PWD/bench/pglite-cpu-meter.mjs" npm run bench -- …
 *
 * Every second (and at exit) it writes `<tmpdir>/pglite-cpu-<pid>.txt`: the CPU time spent inside
 * PGlite's synchronous protocol calls (all statements), the records passed to finish_generations,
 * and the process's own CPU and wall time since start. The initdb child of a first start writes a
 * file of its own (with 0 records). Figures: docs/performance.md.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

let calls = 0;
let micros = 0;
let records = 0;
const startedAt = Date.now();

const execute = PGlite.prototype.execProtocolRawSync;
PGlite.prototype.execProtocolRawSync = function (...args) {
  const before = process.cpuUsage();
  try {
    return execute.apply(this, args);
  } finally {
    const used = process.cpuUsage(before);
    calls++;
    micros += used.user + used.system;
  }
};
const query = PGlite.prototype.query;
PGlite.prototype.query = function (text, params, ...rest) {
  if (String(text).includes("finish_generations") && Array.isArray(params?.[0])) records += params[0].length;
  return query.call(this, text, params, ...rest);
};

function report() {
  const own = process.cpuUsage();
  const perRecord = records > 0 ? `, ${Math.round(micros / records)} µs per record` : "";
  writeFileSync(
    join(tmpdir(), `pglite-cpu-${process.pid}.txt`),
    `PGlite protocol calls ${calls}, CPU ${Math.round(micros / 1000)} ms; records finished ${records}${perRecord}; ` +
      `process CPU ${Math.round((own.user + own.system) / 1000)} ms; wall ${Date.now() - startedAt} ms\n`,
  );
}
setInterval(report, 1000).unref();
process.on("exit", report);
