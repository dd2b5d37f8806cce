/**
 * GET /metrics scraped from a real gateway after real requests: requests by endpoint, format,
 * model, provider and status; upstream attempts, errors and fallbacks by route; tokens and cost;
 * the breaker of a failing route open; latency histograms counted per request; server-tool calls.
 * Labels stay bounded (a model the catalog does not have is `other`) and no key, secret or prompt
 * is exposed. The internal-token option and turning metrics off.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { findSamples, parseExposition, type Sample, sampleValue } from "../helpers/prometheus-exposition.js";
import { forEachGatewayMode, OTHER_MODEL, startTestGateway, TEST_MODEL } from "../helpers/test-gateway.js";

const PROMPT = "prompt-marker-5d1e: the secret plan";
const UNKNOWN_MODEL = "unknown-vendor/model-from-a-caller-3b9f";
/** What the fake upstream bills by default: 10 prompt and 5 completion tokens ($2/M and $8/M). */
const COST_OF_ONE_ANSWER = 60;
const CHAT = "/api/v1/chat/completions";

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/metrics`, { headers });
}

/** Scrapes until `ready` holds: a request is counted when its response has closed, just after the client read it. */
async function scrapeUntil(
  url: string,
  ready: (samples: Sample[]) => boolean,
): Promise<{ text: string; samples: Sample[] }> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const response = await scrape(url);
    assert.equal(response.status, 200);
    const text = await response.text();
    const samples = parseExposition(text);
    if (ready(samples)) return { text, samples };
    assert.ok(Date.now() < deadline, `metrics never got there:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

forEachGatewayMode(
  "metrics count real requests by endpoint, model, route and outcome, with bounded labels and no secret",
  async (context) => {
    const chat = (body: Record<string, unknown>) =>
      context.openai.chat.completions.create({
        messages: [{ role: "user", content: PROMPT }],
        ...body,
      } as never);

    await chat({ model: TEST_MODEL });
    const stream = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      stream: true,
      messages: [{ role: "user", content: PROMPT }],
    });
    for await (const _chunk of stream) {
      // read to the end
    }
    await context.openai.responses.create({ model: TEST_MODEL, input: PROMPT });
    await assert.rejects(chat({ model: UNKNOWN_MODEL }), { status: 400 });
    const badKey = `${context.apiKey}x`;
    await assert.rejects(
      context.createClient(badKey).chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: PROMPT }],
      }),
      { status: 401 },
    );
    // The model's route fails (one failure opens its breaker: breaker_failures 1); the alternative serves.
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "Service Unavailable" } }));
    await chat({ model: TEST_MODEL, models: [OTHER_MODEL] });
    // Its breaker is open now: the route is skipped without a call and the alternative serves again.
    await chat({ model: TEST_MODEL, models: [OTHER_MODEL] });
    assert.equal(context.upstream.requests.length, 6);

    const generation = { endpoint: CHAT, format: "chat_completions" };
    const { text, samples } = await scrapeUntil(context.url, (current) => {
      const counted = findSamples(current, "hi_gateway_requests_total")
        .filter((sample) => sample.labels.endpoint !== "/metrics")
        .reduce((sum, sample) => sum + sample.value, 0);
      // The answers end before their settlements (docs/limits.md): wait for those too.
      return counted === 7 && sampleValue(current, "hi_gateway_reservations_in_flight", {}) === 0;
    });

    // Requests by endpoint, format, requested model, serving provider and status.
    const requests = (labels: Record<string, string>) =>
      sampleValue(samples, "hi_gateway_requests_total", labels);
    assert.equal(requests({ ...generation, model: TEST_MODEL, provider: "fake", status_code: "200" }), 4);
    assert.equal(
      requests({
        endpoint: "/api/v1/responses",
        format: "responses",
        model: TEST_MODEL,
        provider: "fake",
        status_code: "200",
      }),
      1,
    );
    // A model the catalog lacks is `other`; a caller refused before its body was read has no model.
    assert.equal(requests({ ...generation, model: "other", provider: "", status_code: "400" }), 1);
    assert.equal(requests({ ...generation, model: "", provider: "", status_code: "401" }), 1);

    // Upstream attempts, errors and fallbacks by route.
    const route = { provider: "fake", upstream_model: "fake-upstream-model" };
    const otherRoute = { provider: "fake", upstream_model: "fake-other-model" };
    const attempts = (labels: Record<string, string>) =>
      sampleValue(samples, "hi_gateway_upstream_attempts_total", labels);
    assert.equal(attempts({ ...route, outcome: "ok" }), 3);
    assert.equal(attempts({ ...route, outcome: "error" }), 1);
    assert.equal(attempts({ ...route, outcome: "circuit_open" }), 1);
    assert.equal(attempts({ ...otherRoute, outcome: "ok" }), 2);
    assert.equal(
      sampleValue(samples, "hi_gateway_upstream_errors_total", { ...route, code: "provider_unavailable" }),
      1,
    );
    assert.equal(sampleValue(samples, "hi_gateway_fallback_attempts_total", otherRoute), 2);
    assert.equal(sampleValue(samples, "hi_gateway_fallback_attempts_total", route), undefined);
    assert.equal(
      sampleValue(samples, "hi_gateway_upstream_duration_seconds_count", { ...route, outcome: "ok" }),
      3,
    );
    // Skipped routes were not called: no duration for them.
    assert.equal(
      sampleValue(samples, "hi_gateway_upstream_duration_seconds_count", {
        ...route,
        outcome: "circuit_open",
      }),
      undefined,
    );

    // The failing route's breaker is open on this instance; the other's is closed.
    const breaker = (labels: Record<string, string>) =>
      sampleValue(samples, "hi_gateway_circuit_breaker_state", labels);
    assert.equal(breaker({ ...route, state: "open" }), 1);
    assert.equal(breaker({ ...route, state: "closed" }), 0);
    assert.equal(breaker({ ...otherRoute, state: "closed" }), 1);

    // Tokens and cost at the model that served.
    const tokens = (model: string, type: string) =>
      sampleValue(samples, "hi_gateway_tokens_total", { model, provider: "fake", type });
    assert.equal(tokens(TEST_MODEL, "input"), 30);
    assert.equal(tokens(TEST_MODEL, "output"), 15);
    assert.equal(tokens(OTHER_MODEL, "input"), 20);
    assert.equal(tokens(OTHER_MODEL, "output"), 10);
    assert.equal(
      sampleValue(samples, "hi_gateway_cost_micro_usd_total", { model: TEST_MODEL, provider: "fake" }),
      3 * COST_OF_ONE_ANSWER,
    );
    assert.equal(
      sampleValue(samples, "hi_gateway_cost_micro_usd_total", { model: OTHER_MODEL, provider: "fake" }),
      2 * COST_OF_ONE_ANSWER,
    );

    // Latency histograms: one observation per request, in order of size.
    assert.equal(
      sampleValue(samples, "hi_gateway_request_duration_seconds_count", { ...generation, model: TEST_MODEL }),
      4,
    );
    const ttfb = (stream: string) =>
      sampleValue(samples, "hi_gateway_time_to_first_byte_seconds_count", {
        format: "chat_completions",
        model: TEST_MODEL,
        stream,
      });
    assert.equal(ttfb("true"), 1);
    assert.equal(ttfb("false"), 3);
    const overhead = sampleValue(samples, "hi_gateway_overhead_seconds_count", {
      format: "chat_completions",
      stream: "false",
    });
    assert.equal(overhead, 3);
    const durationSum = sampleValue(samples, "hi_gateway_request_duration_seconds_sum", {
      ...generation,
      model: TEST_MODEL,
    });
    const overheadSum = sampleValue(samples, "hi_gateway_overhead_seconds_sum", {
      format: "chat_completions",
      stream: "false",
    });
    assert.ok(durationSum !== undefined && overheadSum !== undefined && overheadSum < durationSum);
    const buckets = findSamples(samples, "hi_gateway_request_duration_seconds_bucket", {
      ...generation,
      model: TEST_MODEL,
    });
    assert.equal(buckets.at(-1)?.labels.le, "+Inf");
    assert.equal(buckets.at(-1)?.value, 4);

    // Nothing held: every generation settled (waited for above). The scrape itself is in flight (and an earlier
    // scrape whose close the server has not seen yet may be).
    assert.equal(sampleValue(samples, "hi_gateway_reservations_in_flight", {}), 0);
    assert.ok((sampleValue(samples, "hi_gateway_requests_in_flight", {}) ?? 0) >= 1);
    // The process: event-loop delay, heap, CPU.
    assert.ok((sampleValue(samples, "nodejs_heap_size_used_bytes", {}) ?? 0) > 0);
    assert.ok((sampleValue(samples, "process_cpu_seconds_total", {}) ?? 0) > 0);
    assert.ok(findSamples(samples, "nodejs_eventloop_lag_p99_seconds").length === 1);

    // Bounded labels: every model label is a catalog slug (or other / none), and no secret shows.
    const models = new Set(
      samples.flatMap((sample) => (sample.labels.model === undefined ? [] : [sample.labels.model])),
    );
    assert.deepEqual([...models].sort(), ["", OTHER_MODEL, TEST_MODEL, "other"].sort());
    for (const secret of [
      context.apiKey,
      badKey,
      context.gateway.internalSecret,
      "sk-upstream-secret",
      PROMPT,
      UNKNOWN_MODEL,
      context.workspaceId,
      context.keyId,
    ]) {
      assert.ok(!text.includes(secret), "a secret, an id or a caller's text reached the metrics");
    }
  },
  { configOverrides: { routing: { breaker_failures: 1 } } },
);

test("metrics behind the internal token: refused without it, served with it in either header", async () => {
  const context = await startTestGateway("embedded", {
    configOverrides: { metrics: { require_internal_token: true } },
  });
  try {
    const secret = context.gateway.internalSecret;
    const refused = await scrape(context.url);
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "invalid_api_key");
    const wrong = await scrape(context.url, { "X-Internal-Token": `${secret}x` });
    assert.equal(wrong.status, 401);
    await wrong.arrayBuffer();
    // A bearer key of the public API is not the internal token.
    const apiKey = await scrape(context.url, { Authorization: `Bearer ${context.apiKey}` });
    assert.equal(apiKey.status, 401);
    await apiKey.arrayBuffer();

    const tokenHeaders: Record<string, string>[] = [
      { "X-Internal-Token": secret },
      { Authorization: `Bearer ${secret}` },
    ];
    for (const headers of tokenHeaders) {
      const served = await scrape(context.url, headers);
      assert.equal(served.status, 200);
      assert.match(served.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      assert.ok(findSamples(parseExposition(await served.text()), "hi_gateway_requests_total").length > 0);
    }
  } finally {
    await context.close();
  }
});

test("metrics turned off: no /metrics route", async () => {
  const context = await startTestGateway("embedded", { configOverrides: { metrics: { enabled: false } } });
  try {
    const response = await scrape(context.url);
    assert.equal(response.status, 404);
    await response.arrayBuffer();
    const document = (await (await fetch(`${context.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    assert.equal(document.paths["/metrics"], undefined);
  } finally {
    await context.close();
  }
});

test("a server-tool call is counted by tool and outcome, and its request's usage over both rounds", async () => {
  const context = await startTestGateway("embedded");
  try {
    context.upstream.enqueue(
      fakeReply.json(
        buildChatCompletion({
          toolCalls: [{ id: "call_1", name: "datetime", arguments: '{"timezone":"Europe/Paris"}' }],
        }),
      ),
    );
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "It is noon in Paris." })));
    await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: PROMPT }],
      plugins: [{ id: "datetime" }],
    } as never);
    const { samples } = await scrapeUntil(
      context.url,
      (current) => findSamples(current, "hi_gateway_server_tool_calls_total").length > 0,
    );
    assert.equal(
      sampleValue(samples, "hi_gateway_server_tool_calls_total", { tool: "datetime", outcome: "completed" }),
      1,
    );
    assert.equal(
      sampleValue(samples, "hi_gateway_server_tool_duration_seconds_count", { tool: "datetime" }),
      1,
    );
    // One attempt served both rounds; the usage is their sum.
    assert.equal(
      sampleValue(samples, "hi_gateway_upstream_attempts_total", {
        provider: "fake",
        upstream_model: "fake-upstream-model",
        outcome: "ok",
      }),
      1,
    );
    assert.equal(
      sampleValue(samples, "hi_gateway_tokens_total", { model: TEST_MODEL, provider: "fake", type: "input" }),
      20,
    );
  } finally {
    await context.close();
  }
});
