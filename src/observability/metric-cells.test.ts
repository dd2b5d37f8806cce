import assert from "node:assert/strict";
import { test } from "node:test";
import { CounterCells, HistogramCells } from "./metric-cells.js";
import { Registry } from "./prom-client-classes.js";

test("cells render as prom-client renders its own: counters per series, cumulative buckets with +Inf, sum and count", async () => {
  const registry = new Registry();
  const requests = new CounterCells({
    name: "t_requests_total",
    help: "Requests.",
    labelNames: ["endpoint", "status_code"] as const,
    registers: [registry],
  });
  const duration = new HistogramCells({
    name: "t_duration_seconds",
    help: "Duration.",
    labelNames: ["endpoint"] as const,
    buckets: [1, 0.1],
    registers: [registry],
  });
  requests.inc({ endpoint: "/a", status_code: "200" });
  requests.inc({ endpoint: "/a", status_code: "200" }, 2);
  requests.inc({ endpoint: "/a", status_code: "500" });
  duration.observe({ endpoint: "/a" }, 0.05);
  duration.observe({ endpoint: "/a" }, 0.5);
  duration.observe({ endpoint: "/a" }, 5);
  duration.observe({ endpoint: "/a" }, Number.NaN);
  const text = await registry.metrics();
  assert.match(text, /# TYPE t_requests_total counter/);
  assert.match(text, /^t_requests_total\{endpoint="\/a",status_code="200"\} 3$/m);
  assert.match(text, /^t_requests_total\{endpoint="\/a",status_code="500"\} 1$/m);
  assert.match(text, /# TYPE t_duration_seconds histogram/);
  assert.match(text, /^t_duration_seconds_bucket\{endpoint="\/a",le="0.1"\} 1$/m);
  assert.match(text, /^t_duration_seconds_bucket\{endpoint="\/a",le="1"\} 2$/m);
  assert.match(text, /^t_duration_seconds_bucket\{endpoint="\/a",le="\+Inf"\} 3$/m);
  assert.match(text, /^t_duration_seconds_sum\{endpoint="\/a"\} 5.55$/m);
  assert.match(text, /^t_duration_seconds_count\{endpoint="\/a"\} 3$/m);
});

test("a series handed out is shown once it is added to, not before, and updates the same series as inc and observe", async () => {
  const registry = new Registry();
  const tokens = new CounterCells({
    name: "t_tokens_total",
    help: "Tokens.",
    labelNames: ["type"] as const,
    registers: [registry],
  });
  const duration = new HistogramCells({
    name: "t_seconds",
    help: "Duration.",
    labelNames: ["endpoint"] as const,
    buckets: [1],
    registers: [registry],
  });
  const cached = tokens.series({ type: "cached_input" });
  const slow = duration.series({ endpoint: "/b" });
  let text = await registry.metrics();
  assert.doesNotMatch(text, /t_tokens_total\{/);
  assert.doesNotMatch(text, /t_seconds_count\{/);
  cached.value += 5;
  tokens.inc({ type: "cached_input" }, 2);
  slow.observe(2);
  duration.observe({ endpoint: "/b" }, 0.5);
  text = await registry.metrics();
  assert.match(text, /^t_tokens_total\{type="cached_input"\} 7$/m);
  assert.match(text, /^t_seconds_bucket\{endpoint="\/b",le="1"\} 1$/m);
  assert.match(text, /^t_seconds_count\{endpoint="\/b"\} 2$/m);
});
