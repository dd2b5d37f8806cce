/**
 * A request's spans built from a scripted settlement: the request span in the caller's trace, one
 * child per attempt at the times the attempts started, one child per server-tool call, and
 * caller text cut short in attributes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type HrTime, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { SettledGeneration } from "../engine/admitted-generation.js";
import type { GenerationAttempt } from "../engine/generation-record.js";
import { buildRequestSpans } from "./build-request-spans.js";
import type { ObservedRequest } from "./observed-request.js";
import { RequestTrace } from "./request-trace.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const ORIGIN = {
  resource: resourceFromAttributes({ "service.name": "test" }),
  instrumentationScope: { name: "hi-gateway" },
};

const toMs = ([seconds, nanoseconds]: HrTime) => seconds * 1000 + nanoseconds / 1e6 - performance.timeOrigin;

function request(settled: SettledGeneration | undefined, trace: RequestTrace): ObservedRequest {
  return {
    requestId: "req-7",
    method: "POST",
    route: "/api/v1/responses",
    status: 200,
    errorCode: undefined,
    startedAt: 1_000,
    firstByteAt: 1_900,
    endedAt: 3_000,
    format: "responses",
    model: "acme/model-one",
    stream: true,
    settledGeneration: settled,
    trace,
  };
}

test("request, attempt and server-tool spans: parents, kinds, times and GenAI attributes", () => {
  const trace = RequestTrace.fromHeaders(`00-${TRACE_ID}-${CALLER_SPAN}-01`, undefined);
  const failedAttempt: GenerationAttempt = {
    provider: "acme",
    model: "acme/model-one",
    upstreamModel: "one-v1",
    outcome: "provider_timeout",
    latencyMs: 400,
  };
  const served: GenerationAttempt = {
    provider: "backup",
    model: "acme/model-one",
    upstreamModel: "one-v1-backup",
    outcome: "ok",
    latencyMs: 1_500,
  };
  const headers = [trace.startAttempt(0), trace.startAttempt(1)];
  trace.attemptStartedAt[0] = 1_050;
  trace.attemptStartedAt[1] = 1_460;
  const settled: SettledGeneration = {
    outcome: {
      status: "ok",
      errorCode: null,
      upstreamProvider: "backup",
      upstreamModel: "one-v1-backup-2026",
      tokensPrompt: 120,
      tokensCompletion: 30,
      tokensReasoning: 10,
      tokensCachedPrompt: 100,
      tokensCacheWrite: 0,
      costMicroUsd: 2_345,
      toolCostsMicroUsd: { web_search: 1_000 },
      latencyMs: 2_000,
      finishReason: "stop",
      attempts: [failedAttempt, served],
    },
    served,
    toolCalls: [
      { tool: "web_search", status: "completed", costMicroUsd: 1_000, startedAt: 2_000, durationMs: 250 },
      {
        tool: "web_fetch",
        status: "failed",
        errorCode: "url_not_allowed",
        costMicroUsd: 0,
        startedAt: 2_300,
        durationMs: 5,
      },
    ],
  };

  const [root, ...children] = buildRequestSpans(request(settled, trace), trace, ORIGIN);
  assert.equal(root.name, "chat acme/model-one");
  assert.equal(root.kind, SpanKind.SERVER);
  assert.deepEqual(root.spanContext(), { traceId: TRACE_ID, spanId: trace.spanId, traceFlags: 1 });
  assert.equal(root.parentSpanContext?.spanId, CALLER_SPAN);
  assert.equal(root.parentSpanContext?.isRemote, true);
  assert.ok(Math.abs(toMs(root.startTime) - 1_000) < 0.01 && Math.abs(toMs(root.endTime) - 3_000) < 0.01);
  assert.deepEqual(root.duration, [2, 0]);
  assert.equal(root.status.code, SpanStatusCode.UNSET);
  assert.equal(root.attributes["gen_ai.response.model"], "one-v1-backup-2026");
  assert.equal(root.attributes["gen_ai.usage.cache_read.input_tokens"], 100);
  assert.equal(root.attributes["gen_ai.usage.reasoning.output_tokens"], 10);
  assert.equal(root.attributes["gen_ai.provider.name"], "backup");
  assert.equal(root.attributes["gateway.cost_micro_usd"], 2_345);
  assert.equal(root.attributes["gateway.ingress_format"], "responses");

  assert.equal(children.length, 4);
  for (const child of children) {
    assert.equal(child.parentSpanContext?.spanId, trace.spanId);
    assert.equal(child.spanContext().traceId, TRACE_ID);
  }
  const [timedOut, backup, search, fetch] = children;
  // Each attempt span has the id its upstream call was sent.
  assert.equal(headers[0].traceparent, `00-${TRACE_ID}-${timedOut.spanContext().spanId}-01`);
  assert.equal(headers[1].traceparent, `00-${TRACE_ID}-${backup.spanContext().spanId}-01`);
  assert.equal(timedOut.kind, SpanKind.CLIENT);
  assert.equal(timedOut.status.code, SpanStatusCode.ERROR);
  assert.equal(timedOut.attributes["error.type"], "provider_timeout");
  // 400 ms recorded, but the next attempt started 410 ms after this one.
  assert.ok(
    Math.abs(toMs(timedOut.startTime) - 1_050) < 0.01 && Math.abs(toMs(timedOut.endTime) - 1_450) < 0.01,
  );
  assert.equal(backup.status.code, SpanStatusCode.UNSET);
  assert.equal(backup.attributes["gen_ai.usage.input_tokens"], 120);
  assert.ok(Math.abs(toMs(backup.endTime) - 2_960) < 0.01);
  assert.equal(timedOut.attributes["gen_ai.usage.input_tokens"], undefined);

  assert.equal(search.kind, SpanKind.INTERNAL);
  assert.equal(search.name, "execute_tool web_search");
  assert.equal(search.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(search.attributes["gen_ai.tool.name"], "web_search");
  assert.equal(search.attributes["gateway.cost_micro_usd"], 1_000);
  assert.ok(Math.abs(toMs(search.startTime) - 2_000) < 0.01 && Math.abs(toMs(search.endTime) - 2_250) < 0.01);
  assert.equal(fetch.status.code, SpanStatusCode.ERROR);
  assert.equal(fetch.attributes["error.type"], "url_not_allowed");
});

test("an attempt whose rounded latency reaches past the request's end ends with the request", () => {
  const trace = RequestTrace.fromHeaders(`00-${TRACE_ID}-${CALLER_SPAN}-01`, undefined);
  trace.startAttempt(0);
  // Started at 1,999.4 and answered with the request at 3,000.0: 1,000.6 ms, recorded as 1,001.
  trace.attemptStartedAt[0] = 1_999.4;
  const served: GenerationAttempt = {
    provider: "acme",
    model: "acme/model-one",
    upstreamModel: "one-v1",
    outcome: "ok",
    latencyMs: 1_001,
  };
  const settled: SettledGeneration = {
    outcome: {
      status: "ok",
      errorCode: null,
      upstreamProvider: "acme",
      upstreamModel: "one-v1",
      tokensPrompt: 1,
      tokensCompletion: 1,
      tokensReasoning: 0,
      tokensCachedPrompt: 0,
      tokensCacheWrite: 0,
      costMicroUsd: 1,
      toolCostsMicroUsd: {},
      latencyMs: 2_000,
      finishReason: "stop",
      attempts: [served],
    },
    served,
    toolCalls: [],
  };
  const [root, attempt] = buildRequestSpans(request(settled, trace), trace, ORIGIN);
  assert.ok(toMs(attempt.endTime) <= toMs(root.endTime), "the child ends within its parent");
  assert.ok(Math.abs(toMs(attempt.endTime) - 3_000) < 0.01);
});

test("a request refused before admission is one span; caller text in it is cut short", () => {
  const trace = RequestTrace.fromHeaders(undefined, undefined);
  const refused = {
    ...request(undefined, trace),
    status: 400,
    errorCode: "invalid_request",
    model: "x".repeat(10_000),
  };
  const spans = buildRequestSpans(refused, trace, ORIGIN);
  assert.equal(spans.length, 1);
  const [span] = spans;
  assert.equal(span.parentSpanContext, undefined);
  assert.equal(span.name, "chat");
  assert.equal(span.attributes["error.type"], "invalid_request");
  assert.equal(String(span.attributes["gen_ai.request.model"]).length, 256);
  // A 4xx is the caller's error, not the server span's.
  assert.equal(span.status.code, SpanStatusCode.UNSET);
});
