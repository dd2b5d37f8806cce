/**
 * The metrics of scripted settlements (what the engine hands over when a request ends): server-tool
 * calls by tool and outcome, usage billed to the route a client left, and labels that stay inside
 * the catalog and the fixed code lists whatever strings arrive.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseExposition, sampleValue } from "../../test/helpers/prometheus-exposition.js";
import type { ExecutedToolCall, SettledGeneration } from "../engine/admitted-generation.js";
import type { GenerationAttempt, GenerationOutcome } from "../engine/generation-record.js";
import { GatewayMetrics } from "./gateway-metrics.js";
import type { ObservedRequest } from "./observed-request.js";

const MODEL = "acme/model-one";

function createMetrics(): GatewayMetrics {
  return new GatewayMetrics({
    catalogModels: [MODEL],
    requestsInFlight: () => 3,
    generationsInFlight: () => 2,
    heldAnswerBytes: () => 6_000_000,
    routeBreakerStates: () => [{ provider: "acme", upstreamModel: "one-v1", state: "half-open" }],
  });
}

function outcome(fields: Partial<GenerationOutcome>): GenerationOutcome {
  return {
    status: "ok",
    errorCode: null,
    upstreamProvider: "acme",
    upstreamModel: "one-v1",
    tokensPrompt: 0,
    tokensCompletion: 0,
    tokensReasoning: 0,
    tokensCachedPrompt: 0,
    tokensCacheWrite: 0,
    costMicroUsd: 0,
    toolCostsMicroUsd: {},
    latencyMs: 0,
    finishReason: "stop",
    ...fields,
  };
}

function generation(settled: SettledGeneration, fields: Partial<ObservedRequest> = {}): ObservedRequest {
  return {
    requestId: "req-1",
    method: "POST",
    route: "/api/v1/messages",
    status: 200,
    errorCode: undefined,
    startedAt: 1_000,
    firstByteAt: 1_400,
    endedAt: 2_000,
    format: "anthropic_messages",
    model: MODEL,
    stream: false,
    settledGeneration: settled,
    trace: undefined,
    ...fields,
  };
}

async function scrape(metrics: GatewayMetrics) {
  return parseExposition((await metrics.render()).body);
}

test("server-tool calls by tool and outcome, with their durations", async () => {
  const metrics = createMetrics();
  const served: GenerationAttempt = {
    provider: "acme",
    model: MODEL,
    upstreamModel: "one-v1",
    outcome: "ok",
    latencyMs: 300,
  };
  const call = (fields: Partial<ExecutedToolCall>): ExecutedToolCall => ({
    tool: "web_search",
    status: "completed",
    costMicroUsd: 5_000,
    startedAt: 1_100,
    durationMs: 200,
    ...fields,
  });
  metrics.record(
    generation({
      outcome: outcome({ attempts: [served], tokensPrompt: 100, tokensCompletion: 20, costMicroUsd: 5_400 }),
      served,
      toolCalls: [
        call({}),
        call({ durationMs: 1_500 }),
        call({ tool: "web_fetch", status: "failed", errorCode: "url_not_allowed", costMicroUsd: 0 }),
        // A code outside the tools' vocabulary is never a label of its own.
        call({
          tool: "web_fetch",
          status: "failed",
          errorCode: "socket hang up at 10.0.0.7",
          costMicroUsd: 0,
        }),
      ],
    }),
  );
  const samples = await scrape(metrics);
  const calls = (tool: string, outcome: string) =>
    sampleValue(samples, "hi_gateway_server_tool_calls_total", { tool, outcome });
  assert.equal(calls("web_search", "completed"), 2);
  assert.equal(calls("web_fetch", "url_not_allowed"), 1);
  assert.equal(calls("web_fetch", "other"), 1);
  assert.equal(
    sampleValue(samples, "hi_gateway_server_tool_duration_seconds_count", { tool: "web_search" }),
    2,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_server_tool_duration_seconds_sum", { tool: "web_search" }),
    1.7,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_server_tool_duration_seconds_bucket", { tool: "web_search", le: "1" }),
    1,
  );
  // The request's cost includes its tools.
  assert.equal(
    sampleValue(samples, "hi_gateway_cost_micro_usd_total", { model: MODEL, provider: "acme" }),
    5_400,
  );
  // Its overhead: the whole second less the upstream's 300 ms.
  assert.equal(
    sampleValue(samples, "hi_gateway_overhead_seconds_sum", {
      format: "anthropic_messages",
      stream: "false",
    }),
    0.7,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_time_to_first_byte_seconds_sum", {
      format: "anthropic_messages",
      model: MODEL,
      stream: "false",
    }),
    0.4,
  );
  metrics.close();
});

test("a client that left while a call was in flight: its prompt is billed to the route it waited for", async () => {
  const metrics = createMetrics();
  const attempts: GenerationAttempt[] = [
    {
      provider: "acme",
      model: MODEL,
      upstreamModel: "one-v1",
      outcome: "provider_overloaded",
      latencyMs: 40,
    },
    { provider: "backup", model: MODEL, upstreamModel: "one-v1-backup", outcome: "cancelled", latencyMs: 90 },
  ];
  metrics.record(
    generation(
      {
        outcome: outcome({ status: "cancelled", attempts, tokensPrompt: 70, costMicroUsd: 140 }),
        served: undefined,
        toolCalls: [],
      },
      { status: 499 },
    ),
  );
  const samples = await scrape(metrics);
  assert.equal(
    sampleValue(samples, "hi_gateway_requests_total", {
      endpoint: "/api/v1/messages",
      format: "anthropic_messages",
      model: MODEL,
      provider: "",
      status_code: "499",
    }),
    1,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_tokens_total", { model: MODEL, provider: "backup", type: "input" }),
    70,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_cost_micro_usd_total", { model: MODEL, provider: "backup" }),
    140,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_upstream_attempts_total", {
      provider: "backup",
      upstream_model: "one-v1-backup",
      outcome: "cancelled",
    }),
    1,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_upstream_errors_total", {
      provider: "acme",
      upstream_model: "one-v1",
      code: "provider_overloaded",
    }),
    1,
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_fallback_attempts_total", {
      provider: "backup",
      upstream_model: "one-v1-backup",
    }),
    1,
  );
  metrics.close();
});

test("labels stay bounded: unknown models and codes are `other`, unmatched paths one value", async () => {
  const metrics = createMetrics();
  for (let index = 0; index < 50; index++) {
    metrics.record(
      generation(
        {
          outcome: outcome({ status: "error", errorCode: `weird_${index}` }),
          served: undefined,
          toolCalls: [],
        },
        { model: `caller-text-${index}`, status: 400, settledGeneration: undefined },
      ),
    );
    metrics.record({
      ...generation({ outcome: outcome({}), served: undefined, toolCalls: [] }),
      route: undefined,
      format: undefined,
      model: undefined,
      settledGeneration: undefined,
      status: 404,
    });
  }
  const attempt: GenerationAttempt = {
    provider: "acme",
    model: MODEL,
    upstreamModel: "one-v1",
    outcome: "not_a_catalog_code",
    latencyMs: 10,
  };
  metrics.record(
    generation({
      outcome: outcome({ status: "error", attempts: [attempt] }),
      served: undefined,
      toolCalls: [],
    }),
  );
  const { body } = await metrics.render();
  assert.ok(
    !body.includes("caller-text-") && !body.includes("weird_") && !body.includes("not_a_catalog_code"),
  );
  const samples = parseExposition(body);
  const requests = samples.filter((sample) => sample.name === "hi_gateway_requests_total");
  assert.deepEqual(
    requests.map((sample) => [
      sample.labels.endpoint,
      sample.labels.model,
      sample.labels.status_code,
      sample.value,
    ]),
    [
      ["/api/v1/messages", "other", "400", 50],
      ["unmatched", "", "404", 50],
      ["/api/v1/messages", MODEL, "200", 1],
    ],
  );
  assert.equal(
    sampleValue(samples, "hi_gateway_upstream_errors_total", {
      provider: "acme",
      upstream_model: "one-v1",
      code: "other",
    }),
    1,
  );
  metrics.close();
});

test("instance gauges are read at scrape time: requests and reservations in flight, breaker states", async () => {
  const metrics = createMetrics();
  const samples = await scrape(metrics);
  assert.equal(sampleValue(samples, "hi_gateway_requests_in_flight", {}), 3);
  assert.equal(sampleValue(samples, "hi_gateway_reservations_in_flight", {}), 2);
  assert.equal(sampleValue(samples, "hi_gateway_held_answer_bytes", {}), 6_000_000);
  const breaker = (state: string) =>
    sampleValue(samples, "hi_gateway_circuit_breaker_state", {
      provider: "acme",
      upstream_model: "one-v1",
      state,
    });
  assert.deepEqual([breaker("closed"), breaker("half-open"), breaker("open")], [0, 1, 0]);
  metrics.close();
});

test("event-loop delay covers the interval since the last scrape", async () => {
  const metrics = createMetrics();
  await scrape(metrics);
  // Hold the loop: the next scrape's maximum delay shows it.
  await new Promise((resolve) => setTimeout(resolve, 30));
  const until = performance.now() + 120;
  while (performance.now() < until) {
    // busy
  }
  await new Promise((resolve) => setTimeout(resolve, 30));
  const held = await scrape(metrics);
  const heldMax = sampleValue(held, "nodejs_eventloop_lag_max_seconds", {}) ?? 0;
  assert.ok(heldMax >= 0.1);
  const p50 = sampleValue(held, "nodejs_eventloop_lag_p50_seconds", {}) ?? 0;
  assert.ok(p50 > 0 && p50 < heldMax);
  // Reset at each scrape: a quiet interval afterwards no longer shows it.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const quiet = await scrape(metrics);
  assert.ok((sampleValue(quiet, "nodejs_eventloop_lag_max_seconds", {}) ?? heldMax) < heldMax);
  metrics.close();
});
