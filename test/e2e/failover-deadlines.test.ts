/**
 * Failover from a stalled route with the default deadlines (no `timeouts` in the catalog): a
 * streamed request whose first route accepts it and never answers is served by the second route
 * once the first-byte deadline (15 s) passes, not after two minutes. What the short deadline must
 * not cut: a streamed answer from the only route that takes longer to start, and a non-streamed
 * answer that takes longer to compute (its head comes only with the whole answer). And
 * `routing.failover_deadline_seconds` means no new attempt after it, within a pass too.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  DEFAULT_REPLY_TEXT,
  type FakeOpenAiUpstream,
  fakeReply,
  type RecordedRequest,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import { startTestGateway, TEST_PRICES, type TestGateway } from "../helpers/test-gateway.js";

/** The default first-byte deadline (src/config/load-config.ts). */
const DEFAULT_FIRST_BYTE_MS = 15_000;
/** Longer than the first-byte deadline, far shorter than the response deadline (120 s). */
const SLOW_START_MS = 17_500;

const STALLING = "test/stalling-first-route";
const SLOW_ONLY_ROUTE = "test/slow-only-route";
const SLOW_FIRST_ROUTE = "test/slow-first-route";

let backup: FakeOpenAiUpstream;
before(async () => {
  backup = await startFakeOpenAiUpstream();
});
after(() => backup.close());

function createModel(slug: string, routes: Array<{ provider: string; model: string }>) {
  return {
    slug,
    name: slug,
    provider: { slug: "test", name: "Test" },
    description: "A model of the failover-deadline test",
    release_date: "2026-01-01",
    context_length: 128_000,
    max_output_tokens: 4_096,
    pricing: TEST_PRICES,
    features: ["tools", "streaming"],
    datacenter_locations: ["local"],
    routes,
  };
}

/** Providers without `timeouts`: every deadline is the default one. */
function createCatalog(upstreamBaseUrl: string, routing: Record<string, unknown> = {}) {
  const provider = (id: string, baseUrl: string) => ({
    id,
    kind: "openai-compatible",
    base_url: baseUrl,
    api_key_env: "FAKE_UPSTREAM_KEY",
  });
  return {
    providers: [provider("first", upstreamBaseUrl), provider("backup", backup.baseUrl)],
    models: [
      createModel(STALLING, [
        { provider: "first", model: "stalls" },
        { provider: "backup", model: "second-upstream-model" },
      ]),
      createModel(SLOW_ONLY_ROUTE, [{ provider: "first", model: "starts-slowly" }]),
      createModel(SLOW_FIRST_ROUTE, [
        { provider: "first", model: "starts-slowly" },
        { provider: "backup", model: "second-upstream-model" },
      ]),
    ],
    routing: { breaker_failures: 1_000, ...routing },
  };
}

/** The first route's upstream: `stalls` never answers, `starts-slowly` answers after SLOW_START_MS. */
async function answerByModel(request: RecordedRequest) {
  if (request.body?.model === "stalls") return fakeReply.hang();
  if (request.body?.model === "fails-slowly") {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return fakeReply.error(503, { error: { message: "Service Unavailable", type: "server_error" } });
  }
  await new Promise((resolve) => setTimeout(resolve, SLOW_START_MS));
  return request.body?.stream === true
    ? fakeReply.sse([{ data: chunk(DEFAULT_REPLY_TEXT) }, { data: chunk("", "stop") }])
    : fakeReply.json({
        id: "chatcmpl-slow",
        object: "chat.completion",
        created: 0,
        model: request.body?.model,
        choices: [
          { index: 0, message: { role: "assistant", content: DEFAULT_REPLY_TEXT }, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
      });
}

function chunk(content: string, finishReason: string | null = null) {
  return {
    id: "chatcmpl-slow",
    object: "chat.completion.chunk",
    created: 0,
    model: "starts-slowly",
    choices: [{ index: 0, delta: { content }, finish_reason: finishReason }],
  };
}

interface Outcome {
  status: number;
  text: string;
  id: string;
  elapsedMs: number;
}

async function ask(context: TestGateway, model: string, stream: boolean): Promise<Outcome> {
  const started = performance.now();
  const response = await fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "Say hello" }] }),
  });
  const body = await response.text();
  const text = stream
    ? body
        .split("\n")
        .filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> })
        .map((event) => event.choices[0]?.delta.content ?? "")
        .join("")
    : response.status === 200
      ? ((JSON.parse(body) as { choices: Array<{ message: { content: string } }> }).choices[0].message
          .content ?? "")
      : body;
  return {
    status: response.status,
    text,
    id: response.headers.get("x-request-id") ?? "",
    elapsedMs: performance.now() - started,
  };
}

interface Attempt {
  provider: string;
  outcome: string;
  latency_ms: number;
}

async function readAttempts(context: TestGateway, id: string): Promise<Attempt[]> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as { data: { status: string; attempts: Attempt[] } };
    if (body.data.status !== "in_progress" || Date.now() > deadline) return body.data.attempts;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("default deadlines: a stalled route is left at the first-byte deadline, slow starts that cannot fail over are kept", async () => {
  const context = await startTestGateway("embedded", { configOverrides: (url) => createCatalog(url) });
  try {
    context.upstream.setHandler(answerByModel);
    // All at once: each waits past the first-byte deadline.
    const [stalled, slowOnly, slowNonStreamed] = await Promise.all([
      ask(context, STALLING, true),
      ask(context, SLOW_ONLY_ROUTE, true),
      ask(context, SLOW_FIRST_ROUTE, false),
    ]);

    assert.equal(stalled.status, 200);
    assert.equal(stalled.text, DEFAULT_REPLY_TEXT, "the second route's answer");
    assert.ok(
      stalled.elapsedMs >= DEFAULT_FIRST_BYTE_MS - 100 && stalled.elapsedMs < DEFAULT_FIRST_BYTE_MS + 10_000,
      `served after ${Math.round(stalled.elapsedMs)} ms`,
    );
    const attempts = await readAttempts(context, stalled.id);
    assert.deepEqual(
      attempts.map((attempt) => `${attempt.provider}:${attempt.outcome}`),
      ["first:provider_timeout", "backup:ok"],
    );
    assert.ok(attempts[0].latency_ms >= DEFAULT_FIRST_BYTE_MS - 100, `${attempts[0].latency_ms} ms`);

    // The only route: nothing to move on to, so its slow start is waited for.
    assert.equal(slowOnly.status, 200);
    assert.equal(slowOnly.text, DEFAULT_REPLY_TEXT);
    assert.deepEqual(
      (await readAttempts(context, slowOnly.id)).map((attempt) => `${attempt.provider}:${attempt.outcome}`),
      ["first:ok"],
    );

    // Non-streamed: the head comes with the whole answer, so a slow one is not a stall.
    assert.equal(slowNonStreamed.status, 200, slowNonStreamed.text);
    assert.equal(slowNonStreamed.text, DEFAULT_REPLY_TEXT);
    assert.deepEqual(
      (await readAttempts(context, slowNonStreamed.id)).map(
        (attempt) => `${attempt.provider}:${attempt.outcome}`,
      ),
      ["first:ok"],
    );
  } finally {
    await context.close();
  }
});

test("failover_deadline_seconds: no new attempt starts after it, within a pass too", async () => {
  const context = await startTestGateway("embedded", {
    configOverrides: (url) => {
      const catalog = createCatalog(url, { failover_deadline_seconds: 1, retries: 0 });
      catalog.models.push(
        createModel("test/fails-slowly", [
          { provider: "first", model: "fails-slowly" },
          { provider: "backup", model: "second-upstream-model" },
        ]),
      );
      return catalog;
    },
  });
  try {
    context.upstream.setHandler(answerByModel);
    const served = backup.requests.length;
    const answer = await ask(context, "test/fails-slowly", false);
    assert.equal(answer.status, 502, answer.text);
    assert.match(answer.text, /provider_unavailable/);
    assert.equal(backup.requests.length, served, "the second route was not called");
    assert.deepEqual(
      (await readAttempts(context, answer.id)).map((attempt) => `${attempt.provider}:${attempt.outcome}`),
      ["first:provider_unavailable"],
    );
  } finally {
    await context.close();
  }
});
