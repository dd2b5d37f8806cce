/**
 * Preload for the gateway child: how much CPU PGlite's statements take inside a running gateway
 * (cold caches, real batch sizes), which a one-process measurement of PGlite alone understates.
 *
 *   BENCH_GATEWAY_NODE_OPTIONS="--import $PWD/bench/pglite-cpu-meter.mjs" npm run bench -- …
 *
 * Every second (and at exit) it writes `<tmpdir>/pglite-cpu-<pid>.txt`: the CPU time spent inside
 * PGlite's synchronous protocol calls (all statements), the records passed to finish_generations,
 * the process's own CPU and wall time since start, and the calls by their first protocol message
 * (P parse, D describe, B bind — a prepared statement's Bind+Execute+Sync is one call —, E
 * execute, S sync, Q simple query). The initdb child of a first start writes a file of its own
 * (with 0 records). The preload itself slows the gateway: compare its figures with each other, not
 * with a run without it. Figures: docs/performance.md.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

let calls = 0;
let micros = 0;
let records = 0;
const byMessage = new Map();
/** Names of prepared statements that call finish_generations (`SqlClient.run`, storage/pglite/pglite-prepared.ts). */
const finishStatements = new Set();
const startedAt = Date.now();

const execute = PGlite.prototype.execProtocolRawSync;
PGlite.prototype.execProtocolRawSync = function (message, ...rest) {
  const before = process.cpuUsage();
  try {
    return execute.call(this, message, ...rest);
  } finally {
    const used = process.cpuUsage(before);
    const spent = used.user + used.system;
    calls++;
    micros += spent;
    const kind = String.fromCharCode(message[0]);
    const entry = byMessage.get(kind) ?? { calls: 0, micros: 0 };
    entry.calls++;
    entry.micros += spent;
    byMessage.set(kind, entry);
  }
};

// query(): the records are its first parameter, an array of ids.
const query = PGlite.prototype.query;
PGlite.prototype.query = function (text, params, ...rest) {
  if (String(text).includes("finish_generations") && Array.isArray(params?.[0])) records += params[0].length;
  return query.call(this, text, params, ...rest);
};

// Prepared statements: Parse names the statement, each Bind carries the ids as a text[] literal.
const execProtocol = PGlite.prototype.execProtocol;
PGlite.prototype.execProtocol = function (message, ...rest) {
  countPrepared(message);
  return execProtocol.call(this, message, ...rest);
};

const decoder = new TextDecoder();
function countPrepared(message) {
  const cString = (offset) => {
    const end = message.indexOf(0, offset);
    return { text: decoder.decode(message.subarray(offset, end)), next: end + 1 };
  };
  if (message[0] === 0x50 /* P */) {
    const name = cString(5);
    if (cString(name.next).text.includes("finish_generations")) finishStatements.add(name.text);
    return;
  }
  if (message[0] !== 0x42 /* B */) return;
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const portal = cString(5);
  const statement = cString(portal.next);
  if (!finishStatements.has(statement.text)) return;
  let offset = statement.next;
  offset += 2 + 2 * view.getInt16(offset); // parameter format codes
  if (view.getInt16(offset) === 0) return;
  const length = view.getInt32(offset + 2);
  if (length <= 2) return; // NULL or "{}"
  const ids = decoder.decode(message.subarray(offset + 6, offset + 6 + length));
  records += ids.split(",").length; // Generation ids contain no commas.
}

function report() {
  const own = process.cpuUsage();
  const perRecord = records > 0 ? `, ${Math.round(micros / records)} µs per record` : "";
  const messages = [...byMessage]
    .map(([kind, entry]) => `${kind} ${entry.calls} × ${Math.round(entry.micros / entry.calls)} µs`)
    .join(", ");
  writeFileSync(
    join(tmpdir(), `pglite-cpu-${process.pid}.txt`),
    `PGlite protocol calls ${calls}, CPU ${Math.round(micros / 1000)} ms; records finished ${records}${perRecord}; ` +
      `process CPU ${Math.round((own.user + own.system) / 1000)} ms; wall ${Date.now() - startedAt} ms\n` +
      `by first message: ${messages}\n`,
  );
}
setInterval(report, 1000).unref();
process.on("exit", report);
