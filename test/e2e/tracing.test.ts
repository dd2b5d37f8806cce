/**
 * Traces exported to a loopback OTLP/HTTP receiver: each request is a SERVER span with the GenAI
 * attributes, with a CLIENT span per upstream attempt (a failed one marked as an error); the
 * caller's `traceparent` is the request span's parent, and each upstream call carries a
 * `traceparent` naming its attempt's span in the same trace. A caller that does not record its
 * trace gets no spans; probes are not traced; nothing secret is exported.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { OTHER_MODEL, startTestGateway, TEST_MODEL } from "../helpers/test-gateway.js";

const PROMPT = "prompt-marker-c41a: the secret plan";
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

test("requests become spans with GenAI attributes and attempt children, in the caller's trace and passed upstream", async () => {
  const receiver = await startOtlpReceiver();
  const context = await startTestGateway("embedded", {
    tracing: { endpoint: receiver.url, serviceName: "gateway-under-test" },
  });
  const messages = [{ role: "user" as const, content: PROMPT }];
  const caller = { traceId: hex(16), spanId: hex(8) };
  const fallbackCaller = { traceId: hex(16), spanId: hex(8) };
  const unsampledTraceId = hex(16);
  let requestIds: { ok: string; fallback: string; stream: string };
  try {
    const ok = await context.openai.chat.completions
      .create(
        { model: TEST_MODEL, messages },
        { headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01`, tracestate: "vendor=abc" } },
      )
      .withResponse();
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "Service Unavailable" } }));
    const fallback = await context.openai.chat.completions
      .create({ model: TEST_MODEL, models: [OTHER_MODEL], messages } as never, {
        headers: { traceparent: `00-${fallbackCaller.traceId}-${fallbackCaller.spanId}-01` },
      })
      .withResponse();
    // No traceparent: the request starts a trace of its own.
    const stream = await context.openai.chat.completions
      .create({ model: TEST_MODEL, stream: true, messages })
      .withResponse();
    for await (const _chunk of stream.data) {
      // read to the end
    }
    // The caller does not record this trace: neither does the gateway, but it still passes it on.
    await context.openai.chat.completions.create(
      { model: TEST_MODEL, messages },
      { headers: { traceparent: `00-${unsampledTraceId}-${hex(8)}-00` } },
    );
    const probe = await fetch(`${context.url}/healthz`);
    await probe.arrayBuffer();
    requestIds = {
      ok: ok.response.headers.get("x-request-id")!,
      fallback: fallback.response.headers.get("x-request-id")!,
      stream: stream.response.headers.get("x-request-id")!,
    };
  } finally {
    // Closing the gateway exports what its batch still holds.
    await context.close();
  }
  await receiver.close();
  const spans = receiver.spans();
  const upstream = context.upstream.requests;
  assert.equal(upstream.length, 5);
  const requestSpan = (requestId: string) => {
    const found = spans.filter((span) => span.attributes["gateway.request_id"] === requestId);
    assert.equal(found.length, 1, `one span for request ${requestId}`);
    return found[0];
  };
  const childrenOf = (parent: ReceivedSpan) =>
    spans
      .filter((span) => span.parentSpanId === parent.spanId)
      .sort(
        (a, b) =>
          Number(a.attributes["gateway.attempt.index"]) - Number(b.attributes["gateway.attempt.index"]),
      );

  // The request span: the caller's span is its parent; GenAI attributes of what was served.
  const okSpan = requestSpan(requestIds.ok);
  assert.equal(okSpan.traceId, caller.traceId);
  assert.equal(okSpan.parentSpanId, caller.spanId);
  assert.equal(okSpan.kind, SERVER);
  assert.equal(okSpan.name, `chat ${TEST_MODEL}`);
  assert.equal(okSpan.resource["service.name"], "gateway-under-test");
  assert.deepEqual(
    {
      operation: okSpan.attributes["gen_ai.operation.name"],
      provider: okSpan.attributes["gen_ai.provider.name"],
      requestModel: okSpan.attributes["gen_ai.request.model"],
      responseModel: okSpan.attributes["gen_ai.response.model"],
      inputTokens: okSpan.attributes["gen_ai.usage.input_tokens"],
      outputTokens: okSpan.attributes["gen_ai.usage.output_tokens"],
      finishReasons: okSpan.attributes["gen_ai.response.finish_reasons"],
      stream: okSpan.attributes["gen_ai.request.stream"],
      status: okSpan.attributes["http.response.status_code"],
      route: okSpan.attributes["http.route"],
      cost: okSpan.attributes["gateway.cost_micro_usd"],
    },
    {
      operation: "chat",
      provider: "fake",
      requestModel: TEST_MODEL,
      responseModel: "fake-model-2025-01-01",
      inputTokens: 10,
      outputTokens: 5,
      finishReasons: ["stop"],
      stream: false,
      status: 200,
      route: "/api/v1/chat/completions",
      cost: 60,
    },
  );
  assert.equal(okSpan.status.code, 0);
  // Its attempt: a CLIENT child within it, whose id the upstream call carried with the caller's tracestate.
  const [okAttempt, ...noOther] = childrenOf(okSpan);
  assert.equal(noOther.length, 0);
  assert.equal(okAttempt.kind, CLIENT);
  assert.equal(okAttempt.name, "chat fake-upstream-model");
  assert.equal(okAttempt.attributes["gen_ai.request.model"], "fake-upstream-model");
  assert.equal(okAttempt.attributes["gen_ai.usage.input_tokens"], 10);
  assert.ok(okAttempt.startNanos >= okSpan.startNanos && okAttempt.endNanos <= okSpan.endNanos);
  assert.equal(upstream[0].headers.traceparent, `00-${caller.traceId}-${okAttempt.spanId}-01`);
  assert.equal(upstream[0].headers.tracestate, "vendor=abc");

  // A fallback: the failed attempt is an error span, the next one served; each upstream call names its own.
  const fallbackSpan = requestSpan(requestIds.fallback);
  assert.equal(fallbackSpan.traceId, fallbackCaller.traceId);
  assert.equal(fallbackSpan.parentSpanId, fallbackCaller.spanId);
  assert.equal(fallbackSpan.attributes["gateway.served_model"], OTHER_MODEL);
  assert.equal(fallbackSpan.attributes["gateway.attempts"], 2);
  const [failed, served] = childrenOf(fallbackSpan);
  assert.equal(failed.attributes["error.type"], "provider_unavailable");
  assert.equal(failed.status.code, STATUS_ERROR);
  assert.equal(failed.attributes["gen_ai.request.model"], "fake-upstream-model");
  assert.equal(served.status.code, 0);
  assert.equal(served.attributes["gen_ai.request.model"], "fake-other-model");
  assert.equal(served.attributes["gateway.catalog_model"], OTHER_MODEL);
  assert.ok(failed.endNanos <= served.startNanos, "the attempts follow each other");
  assert.equal(upstream[1].headers.traceparent, `00-${fallbackCaller.traceId}-${failed.spanId}-01`);
  assert.equal(upstream[2].headers.traceparent, `00-${fallbackCaller.traceId}-${served.spanId}-01`);
  assert.equal(upstream[2].headers.tracestate, undefined);

  // No caller trace: a new trace, the request span its root.
  const streamSpan = requestSpan(requestIds.stream);
  assert.equal(streamSpan.parentSpanId, "");
  assert.match(streamSpan.traceId, /^[0-9a-f]{32}$/);
  assert.ok(![caller.traceId, fallbackCaller.traceId].includes(streamSpan.traceId));
  assert.equal(streamSpan.attributes["gen_ai.request.stream"], true);
  const [streamAttempt] = childrenOf(streamSpan);
  assert.equal(upstream[3].headers.traceparent, `00-${streamSpan.traceId}-${streamAttempt.spanId}-01`);

  // Not sampled by the caller: nothing exported, the upstream still told (not sampled either).
  assert.equal(spans.filter((span) => span.traceId === unsampledTraceId).length, 0);
  assert.match(
    String(upstream[4].headers.traceparent),
    new RegExp(`^00-${unsampledTraceId}-[0-9a-f]{16}-00$`),
  );

  // Probes are not traced; every exported span is one of these three requests' trees.
  assert.equal(spans.filter((span) => span.attributes["http.route"] === "/healthz").length, 0);
  assert.equal(spans.length, 3 + 4);
  const exported = receiver.bodies.join("\n");
  for (const secret of [context.apiKey, context.gateway.internalSecret, "sk-upstream-secret", PROMPT]) {
    assert.ok(!exported.includes(secret), "a secret or the prompt reached the exported spans");
  }
});

test("a refused request is a span too, with its error type and the status it was answered", async () => {
  const receiver = await startOtlpReceiver();
  const context = await startTestGateway("embedded", {
    tracing: { endpoint: receiver.url, serviceName: "gateway-under-test" },
  });
  const badKey = `${context.apiKey}x`;
  try {
    await assert.rejects(
      context.createClient(badKey).chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: PROMPT }],
      }),
      { status: 401 },
    );
    const missing = await fetch(`${context.url}/api/v1/no-such-thing`);
    await missing.arrayBuffer();
  } finally {
    await context.close();
  }
  await receiver.close();
  const spans = receiver.spans();
  assert.equal(spans.length, 2);
  const refused = spans.find((span) => span.attributes["http.route"] === "/api/v1/chat/completions");
  assert.ok(refused);
  assert.equal(refused.name, "chat");
  assert.equal(refused.attributes["http.response.status_code"], 401);
  assert.equal(refused.attributes["error.type"], "invalid_api_key");
  assert.equal(refused.attributes["gen_ai.request.model"], undefined);
  const unmatched = spans.find((span) => span !== refused);
  assert.equal(unmatched?.name, "GET");
  assert.equal(unmatched?.attributes["http.response.status_code"], 404);
  assert.ok(!receiver.bodies.join("\n").includes(badKey));
});

test("a server-tool call is a child span of its request; the rounds after it stay in the serving attempt", async () => {
  const receiver = await startOtlpReceiver();
  const context = await startTestGateway("embedded", {
    tracing: { endpoint: receiver.url, serviceName: "gateway-under-test" },
  });
  let requestId: string;
  try {
    context.upstream.enqueue(
      fakeReply.json(
        buildChatCompletion({
          toolCalls: [{ id: "call_1", name: "datetime", arguments: '{"timezone":"Europe/Paris"}' }],
        }),
      ),
    );
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "It is noon in Paris." })));
    const answer = await context.openai.chat.completions
      .create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: PROMPT }],
        plugins: [{ id: "datetime" }],
      } as never)
      .withResponse();
    assert.equal(answer.data.choices[0].message.content, "It is noon in Paris.");
    requestId = answer.response.headers.get("x-request-id")!;
  } finally {
    await context.close();
  }
  await receiver.close();
  const spans = receiver.spans();
  const root = spans.find((span) => span.attributes["gateway.request_id"] === requestId);
  assert.ok(root);
  const children = spans.filter((span) => span.parentSpanId === root.spanId);
  const attempts = children.filter((span) => span.kind === CLIENT);
  const tools = children.filter((span) => span.kind === INTERNAL);
  assert.equal(attempts.length, 1);
  assert.equal(tools.length, 1);
  const [tool] = tools;
  assert.equal(tool.name, "execute_tool datetime");
  assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(tool.attributes["gen_ai.tool.name"], "datetime");
  assert.equal(tool.status.code, 0);
  assert.ok(tool.startNanos >= attempts[0].startNanos && tool.endNanos <= root.endNanos);
  // Both upstream rounds are calls of the one serving attempt.
  const traceparent = `00-${root.traceId}-${attempts[0].spanId}-01`;
  assert.deepEqual(
    context.upstream.requests.map((request) => request.headers.traceparent),
    [traceparent, traceparent],
  );
});
