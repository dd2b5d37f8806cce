import assert from "node:assert/strict";
import { test } from "node:test";
import { resolvePgliteThread } from "../storage/pglite/pglite-client.js";
import {
  DEFAULT_HEAP_GROWING_PERCENT,
  DEFAULT_INSTANCE_LIMITS,
  readSettings,
  resolveInstanceLimits,
} from "./settings.js";

test("GATEWAY_PGLITE_THREAD: auto when unset, one of auto/main/worker, anything else named in the error", () => {
  assert.equal(readSettings({}).pgliteThread, "auto");
  assert.equal(readSettings({ GATEWAY_PGLITE_THREAD: "worker" }).pgliteThread, "worker");
  assert.equal(readSettings({ GATEWAY_PGLITE_THREAD: "main" }).pgliteThread, "main");
  assert.throws(
    () => readSettings({ GATEWAY_PGLITE_THREAD: "thread" }),
    /GATEWAY_PGLITE_THREAD must be one of auto, main, worker, got "thread"/,
  );
});

test("GATEWAY_HEAP_GROWING_PERCENT: the default when unset or empty, 0 leaves V8's own, anything else named in the error", () => {
  assert.equal(readSettings({}).heapGrowingPercent, DEFAULT_HEAP_GROWING_PERCENT);
  assert.equal(
    readSettings({ GATEWAY_HEAP_GROWING_PERCENT: "" }).heapGrowingPercent,
    DEFAULT_HEAP_GROWING_PERCENT,
  );
  assert.equal(readSettings({ GATEWAY_HEAP_GROWING_PERCENT: "0" }).heapGrowingPercent, 0);
  assert.equal(readSettings({ GATEWAY_HEAP_GROWING_PERCENT: "20" }).heapGrowingPercent, 20);
  for (const value of ["-1", "1.5", "lots"]) {
    assert.throws(
      () => readSettings({ GATEWAY_HEAP_GROWING_PERCENT: value }),
      new RegExp(`GATEWAY_HEAP_GROWING_PERCENT must be an integer 0..1000, got "${value}"`),
    );
  }
});

test("auto runs PGlite in a worker only when the process may use more than one CPU", () => {
  assert.equal(resolvePgliteThread("auto", 1), "main");
  assert.equal(resolvePgliteThread("auto", 2), "worker");
  assert.equal(resolvePgliteThread("main", 8), "main");
  assert.equal(resolvePgliteThread("worker", 1), "worker");
});

test("instance limits: defaults when unset, integers from the environment, a bad value named in the error", () => {
  const defaults = readSettings({}).instanceLimits;
  assert.deepEqual(defaults, DEFAULT_INSTANCE_LIMITS);
  const set = readSettings({
    GATEWAY_HEADERS_TIMEOUT_MS: "5000",
    GATEWAY_MAX_REQUESTS_IN_FLIGHT: "64",
    GATEWAY_EVENT_LOOP_STALL_MS: "0",
    GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: "32",
    GATEWAY_NEW_CONNECTION_TIMEOUT_MS: "2000",
  }).instanceLimits;
  assert.equal(defaults?.maxConnectionsPerAddress, 0, "no per-address cap unless set");
  assert.equal(defaults?.newConnectionTimeoutMs, 5_000);
  assert.equal(set?.maxConnectionsPerAddress, 32);
  assert.equal(set?.newConnectionTimeoutMs, 2000);
  assert.equal(set?.headersTimeoutMs, 5000);
  assert.equal(set?.maxRequestsInFlight, 64);
  assert.equal(set?.eventLoopStallMs, 0);
  assert.equal(set?.drainTimeoutMs, DEFAULT_INSTANCE_LIMITS.drainTimeoutMs);
  assert.throws(
    () => readSettings({ GATEWAY_DRAIN_TIMEOUT_MS: "soon" }),
    /GATEWAY_DRAIN_TIMEOUT_MS must be an integer of at least 0, got "soon"/,
  );
  assert.throws(() => readSettings({ GATEWAY_MAX_CONNECTIONS: "0" }), /GATEWAY_MAX_CONNECTIONS/);
  assert.throws(
    () => readSettings({ GATEWAY_NEW_CONNECTION_TIMEOUT_MS: "10" }),
    /GATEWAY_NEW_CONNECTION_TIMEOUT_MS must be an integer of at least 100/,
  );
  assert.deepEqual(resolveInstanceLimits({ instanceLimits: { drainTimeoutMs: 1 } }), {
    ...DEFAULT_INSTANCE_LIMITS,
    drainTimeoutMs: 1,
  });
});

test("tracing: off without an OTLP endpoint; the traces URL from the base or as given; the service name", () => {
  assert.equal(readSettings({}).tracing, undefined);
  assert.deepEqual(readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing, {
    endpoint: "http://collector:4318/v1/traces",
    serviceName: "hi-gateway",
  });
  assert.deepEqual(
    readSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp",
      OTEL_SERVICE_NAME: "gateway-eu",
    }).tracing,
    { endpoint: "https://traces.example/otlp", serviceName: "gateway-eu" },
  );
  assert.equal(
    readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }).tracing,
    undefined,
  );
  // A bad URL is named, but not echoed: it may carry credentials.
  assert.throws(
    () => readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://user:secret@collector:4317" }),
    (error: Error) =>
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/.test(error.message) &&
      !error.message.includes("secret"),
  );
});
