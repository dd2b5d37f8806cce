/**
 * Provider prompt caches: requests that share a cache key (or a long prompt prefix) go to the same
 * one of a model's three routes, every time, and to the same fallback when that route fails; the
 * prompt-cache fields reach each kind of upstream (Chat Completions, Responses, Anthropic), from
 * whichever format the caller spoke where the meaning carries; cached tokens are billed at the
 * cached price and shown by the lookup.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startFakeAnthropicUpstream } from "../helpers/fake-anthropic-upstream.js";
import { startFakeOpenAiResponsesUpstream } from "../helpers/fake-openai-responses-upstream.js";
import {
  buildChatCompletion,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import { startTestGateway, TEST_MODEL, TEST_PRICES, type TestGateway } from "../helpers/test-gateway.js";

const STICKY_MODEL = "test/sticky-model";
const RESPONSES_MODEL = "test/responses-model";
const ANTHROPIC_MODEL = "test/anthropic-model";

let routes: FakeOpenAiUpstream[];
let responsesUpstream: FakeOpenAiUpstream;
let anthropicUpstream: FakeOpenAiUpstream;
let context: TestGateway;

function model(slug: string, routeList: Array<{ provider: string; model: string }>) {
  return {
    slug,
    name: slug,
    provider: { slug: "test", name: "Test" },
    description: "prompt-cache routing",
    release_date: "2026-01-01",
    context_length: 128_000,
    max_output_tokens: 4_096,
    pricing: TEST_PRICES,
    features: ["tools", "streaming"],
    datacenter_locations: ["local"],
    routes: routeList,
  };
}

function provider(id: string, kind: string, baseUrl: string) {
  return {
    id,
    kind,
    base_url: baseUrl,
    api_key_env: "FAKE_UPSTREAM_KEY",
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, response_ms: 5_000, idle_ms: 5_000 },
  };
}

before(async () => {
  routes = await Promise.all([
    startFakeOpenAiUpstream(),
    startFakeOpenAiUpstream(),
    startFakeOpenAiUpstream(),
  ]);
  responsesUpstream = await startFakeOpenAiResponsesUpstream();
  anthropicUpstream = await startFakeAnthropicUpstream();
  context = await startTestGateway("embedded", {
    configOverrides: (fakeUrl) => ({
      providers: [
        provider("fake", "openai-compatible", fakeUrl),
        ...routes.map((route, index) => provider(`route-${index}`, "openai-compatible", route.baseUrl)),
        provider("responses", "openai-responses", responsesUpstream.baseUrl),
        provider("anthropic", "anthropic", anthropicUpstream.baseUrl),
      ],
      models: [
        model(TEST_MODEL, [{ provider: "fake", model: "fake-upstream-model" }]),
        model(
          STICKY_MODEL,
          routes.map((_, index) => ({ provider: `route-${index}`, model: `upstream-${index}` })),
        ),
        model(RESPONSES_MODEL, [{ provider: "responses", model: "gpt-fake" }]),
        model(ANTHROPIC_MODEL, [{ provider: "anthropic", model: "claude-fake" }]),
      ],
      // The failover test fails one route on purpose: keep its breaker closed.
      routing: { breaker_failures: 1_000, retries: 0 },
    }),
  });
});

after(async () => {
  await context?.close();
  await Promise.all([...routes, responsesUpstream, anthropicUpstream].map((upstream) => upstream?.close()));
});

/** Which of the three routes served each request, by the upstream that recorded it. */
function routeCounts(): number[] {
  return routes.map((route) => route.requests.length);
}

async function chat(body: Record<string, unknown>, apiKey = context.apiKey): Promise<Response> {
  return fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The index of the route that got the last request (exactly one of them got one more). */
async function servedBy(body: Record<string, unknown>): Promise<number> {
  const before = routeCounts();
  const response = await chat(body);
  assert.equal(response.status, 200, await response.text());
  await response.body?.cancel().catch(() => {});
  const grown = routeCounts()
    .map((count, index) => ({ index, grew: count - before[index] }))
    .filter((entry) => entry.grew > 0);
  assert.equal(grown.length, 1, "one route answers each request");
  return grown[0].index;
}

test("requests with the same prompt_cache_key go to the same one of three routes, every time", async () => {
  const chosen = new Map<string, Set<number>>();
  for (let round = 0; round < 4; round++) {
    for (let key = 0; key < 12; key++) {
      const cacheKey = `tenant-${key}`;
      const route = await servedBy({
        model: STICKY_MODEL,
        messages: [{ role: "user", content: `question ${round}` }],
        prompt_cache_key: cacheKey,
      });
      const seen = chosen.get(cacheKey) ?? new Set<number>();
      seen.add(route);
      chosen.set(cacheKey, seen);
    }
  }
  for (const [key, seen] of chosen) assert.equal(seen.size, 1, `${key} went to routes ${[...seen]}`);
  // Different keys spread over the routes rather than all landing on the first one.
  const used = new Set([...chosen.values()].map((seen) => [...seen][0]));
  assert.ok(used.size >= 2, `12 keys used ${used.size} route(s)`);
  // The key itself reached the upstream.
  const last = routes.flatMap((route) => route.requests).at(-1);
  assert.match(String(last?.body.prompt_cache_key), /^tenant-/);
});

test("without a key, requests sharing a long prompt prefix stick to one route; short prompts keep the catalog order", async () => {
  const system = "You are a careful assistant. ".repeat(200);
  const prefixes = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
  const used = new Set<number>();
  for (const name of prefixes) {
    const seen = new Set<number>();
    for (let turn = 0; turn < 3; turn++) {
      seen.add(
        await servedBy({
          model: STICKY_MODEL,
          messages: [
            { role: "system", content: `${name}: ${system}` },
            { role: "user", content: `turn ${turn}` },
          ],
        }),
      );
    }
    assert.equal(seen.size, 1, `prefix ${name} went to routes ${[...seen]}`);
    used.add([...seen][0]);
  }
  assert.ok(used.size >= 2, `6 prefixes used ${used.size} route(s)`);
  for (let turn = 0; turn < 3; turn++) {
    assert.equal(
      await servedBy({ model: STICKY_MODEL, messages: [{ role: "user", content: `hi ${turn}` }] }),
      0,
    );
  }
});

test("when the sticky route fails, the request falls back, and always to the same next route", async () => {
  const body = {
    model: STICKY_MODEL,
    messages: [{ role: "user", content: "q" }],
    prompt_cache_key: "failing",
  };
  const sticky = await servedBy(body);
  routes[sticky].setHandler(() =>
    fakeReply.error(503, { error: { message: "Service Unavailable", type: "server_error" } }),
  );
  try {
    const fallbacks = new Set<number>();
    for (let attempt = 0; attempt < 4; attempt++) {
      const before = routeCounts();
      const response = await chat(body);
      assert.equal(response.status, 200, await response.text());
      const after = routeCounts();
      assert.equal(after[sticky] - before[sticky], 1, "the sticky route is tried first");
      const served = after.findIndex((count, index) => index !== sticky && count > before[index]);
      assert.notEqual(served, -1, "another route served");
      fallbacks.add(served);
    }
    assert.equal(fallbacks.size, 1, `fell back to ${[...fallbacks]}`);
  } finally {
    routes[sticky].setHandler(undefined);
  }
  assert.equal(await servedBy(body), sticky, "back on the sticky route once it recovers");
});

test("prompt_cache_key and prompt_cache_retention reach Chat Completions and Responses upstreams from either OpenAI format", async () => {
  const fields = { prompt_cache_key: "agent-7", prompt_cache_retention: "24h" };
  // Chat Completions caller → Responses upstream.
  let response = await chat({
    model: RESPONSES_MODEL,
    messages: [{ role: "user", content: "hi" }],
    ...fields,
  });
  assert.equal(response.status, 200, await response.text());
  assert.equal(response.headers.get("x-hi-dropped"), null);
  let sent = responsesUpstream.requests.at(-1)?.body;
  assert.equal(sent.prompt_cache_key, "agent-7");
  assert.equal(sent.prompt_cache_retention, "24h");
  // Responses caller → Chat Completions upstream, streamed.
  response = await fetch(`${context.url}/api/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: STICKY_MODEL, input: "hi", stream: true, ...fields }),
  });
  assert.equal(response.status, 200);
  await response.text();
  assert.equal(response.headers.get("x-hi-dropped"), null);
  sent = routes
    .flatMap((route) => route.requests)
    .find((request) => request.body.prompt_cache_key === "agent-7")?.body;
  assert.equal(sent?.prompt_cache_retention, "24h");
  assert.equal(sent?.stream, true);
  // Responses caller → Responses upstream (its own format).
  response = await fetch(`${context.url}/api/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: RESPONSES_MODEL, input: "hi", ...fields }),
  });
  assert.equal(response.status, 200);
  assert.equal(responsesUpstream.requests.at(-1)?.body.prompt_cache_key, "agent-7");
});

test("cache_control breakpoints with their 1h TTL reach Anthropic upstreams from Messages and Chat Completions callers", async () => {
  const response = await fetch(`${context.url}/api/v1/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: ANTHROPIC_MODEL,
      max_tokens: 100,
      system: [{ type: "text", text: "long system prompt", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
      ],
    }),
  });
  assert.equal(response.status, 200, await response.text());
  let sent = anthropicUpstream.requests.at(-1)?.body;
  assert.deepEqual(sent.system[0].cache_control, { type: "ephemeral", ttl: "1h" });
  assert.deepEqual(sent.messages[0].content[0].cache_control, { type: "ephemeral" });
  const chatResponse = await chat({
    model: ANTHROPIC_MODEL,
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral", ttl: "1h" } }],
      },
    ],
  });
  assert.equal(chatResponse.status, 200, await chatResponse.text());
  sent = anthropicUpstream.requests.at(-1)?.body;
  assert.deepEqual(sent.messages[0].content[0].cache_control, { type: "ephemeral", ttl: "1h" });
});

test("cached prompt tokens are billed at the cached price and shown by the lookup", async () => {
  context.upstream.enqueue(
    fakeReply.json(
      buildChatCompletion({
        content: "ok",
        usage: {
          prompt_tokens: 10_000,
          completion_tokens: 100,
          total_tokens: 10_100,
          prompt_tokens_details: { cached_tokens: 8_000 },
        },
      }),
    ),
  );
  const response = await chat({
    model: TEST_MODEL,
    messages: [{ role: "user", content: "hi" }],
    prompt_cache_key: "k",
  });
  const body = (await response.json()) as { id: string };
  assert.equal(response.status, 200);
  assert.equal(context.upstream.requests.at(-1)?.body.prompt_cache_key, "k");
  const lookup = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(body.id)}`, {
    headers: { authorization: `Bearer ${context.apiKey}` },
  });
  const record = ((await lookup.json()) as { data: Record<string, unknown> }).data;
  assert.equal(record.tokens_prompt, 10_000);
  assert.equal(record.tokens_cached_prompt, 8_000);
  // 2,000 uncached at $2/M, 8,000 cached at $0.50/M, 100 out at $8/M: 4,000 + 4,000 + 800 micro-USD.
  assert.equal(record.cost_micro_usd, "8800");
});
