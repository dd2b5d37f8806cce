import assert from "node:assert/strict";
import { test } from "node:test";
import { resolvePgliteThread } from "../storage/sql-client.js";
import { readSettings } from "./settings.js";

test("GATEWAY_PGLITE_THREAD: auto when unset, one of auto/main/worker, anything else named in the error", () => {
  assert.equal(readSettings({}).pgliteThread, "auto");
  assert.equal(readSettings({ GATEWAY_PGLITE_THREAD: "worker" }).pgliteThread, "worker");
  assert.equal(readSettings({ GATEWAY_PGLITE_THREAD: "main" }).pgliteThread, "main");
  assert.throws(
    () => readSettings({ GATEWAY_PGLITE_THREAD: "thread" }),
    /GATEWAY_PGLITE_THREAD must be one of auto, main, worker, got "thread"/,
  );
});

test("auto runs PGlite in a worker only when the process may use more than one CPU", () => {
  assert.equal(resolvePgliteThread("auto", 1), "main");
  assert.equal(resolvePgliteThread("auto", 2), "worker");
  assert.equal(resolvePgliteThread("main", 8), "main");
  assert.equal(resolvePgliteThread("worker", 1), "worker");
});
