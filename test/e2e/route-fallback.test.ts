/**
 * Failover across a model's routes, seen by the official clients: the model's first route answers
 * 503, 529, or nothing before its deadline (first byte when streamed, response when not); its
 * second route serves. In all three
 * formats, streamed and not, the client gets one ordinary response naming the requested model,
 * and the generation lookup shows both attempts, only the second billed.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  DEFAULT_REPLY_TEXT,
  type FakeOpenAiUpstream,
  type FakeReply,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, TEST_PRICES, type TestGateway } from "../helpers/test-gateway.js";

/** The second route's upstream: answers every request with the fake's default reply. */
let backup: FakeOpenAiUpstream;
before(async () => {
  backup = await startFakeOpenAiUpstream();
});
after(() => backup.close());

const FIRST_BYTE_MS = 400;
const ALT_MODEL = "test/alt-model";

function createCatalog(upstreamBaseUrl: string) {
  const provider = (id: string, baseUrl: string) => ({
    id,
    kind: "openai-compatible",
    base_url: baseUrl,
    api_key_env: "FAKE_UPSTREAM_KEY",
    timeouts: { connect_ms: 2_000, first_byte_ms: FIRST_BYTE_MS, response_ms: FIRST_BYTE_MS, idle_ms: 5_000 },
  });
  return {
    providers: [provider("fake", upstreamBaseUrl), provider("backup", backup.baseUrl)],
    models: [
      {
        slug: TEST_MODEL,
        name: TEST_MODEL,
        provider: { slug: "test", name: "Test" },
        description: "Two routes: the test's fake first, the backup second",
        release_date: "2026-01-01",
        context_length: 128_000,
        max_output_tokens: 4_096,
        pricing: TEST_PRICES,
        features: ["tools", "streaming"],
        datacenter_locations: ["local"],
        routes: [
          { provider: "fake", model: "first-upstream-model" },
          { provider: "backup", model: "second-upstream-model" },
        ],
      },
      {
        slug: ALT_MODEL,
        name: ALT_MODEL,
        provider: { slug: "test", name: "Test" },
        description: "An alternative a request may name in models",
        release_date: "2026-01-01",
        context_length: 128_000,
        max_output_tokens: 4_096,
        pricing: { prompt: "4", completion: "16" },
        features: ["tools", "streaming"],
        datacenter_locations: ["local"],
        routes: [{ provider: "backup", model: "alt-upstream-model" }],
      },
    ],
    // Every failure here is the first route's: keep its breaker closed so each request tries it.
    routing: { breaker_failures: 1_000 },
  };
}

interface AttemptView {
  provider: string;
  model: string;
  upstream_model: string;
  outcome: string;
  latency_ms: number;
}

interface GenerationView {
  status: string;
  upstream_provider: string;
  cost_micro_usd: string;
  attempts: AttemptView[];
}

/** The record once final (the distributed store writes it a moment after the answer). */
async function readFinal(context: TestGateway, id: string): Promise<GenerationView> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as { data: GenerationView };
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.data.status !== "in_progress" || Date.now() > deadline) return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const FAILURES: Array<{ name: string; reply: () => FakeReply; outcome: string }> = [
  {
    name: "503",
    reply: () => fakeReply.error(503, { error: { message: "Service Unavailable", type: "server_error" } }),
    outcome: "provider_unavailable",
  },
  {
    name: "529",
    reply: () =>
      fakeReply.error(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    outcome: "provider_overloaded",
  },
  {
    name: "a stall past the first-byte deadline",
    reply: () => fakeReply.hang(),
    outcome: "provider_timeout",
  },
];

type Format = "chat completions" | "responses" | "messages";

/** One request in `format` through its official client; resolves to the answer's id and text. */
async function ask(
  context: TestGateway,
  format: Format,
  stream: boolean,
): Promise<{ id: string; text: string; model: string }> {
  const input = "Say hello";
  if (format === "chat completions") {
    if (!stream) {
      const completion = await context.openai.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: input }],
      });
      return {
        id: completion.id,
        text: completion.choices[0].message.content ?? "",
        model: completion.model,
      };
    }
    const chunks = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: input }],
      stream: true,
    });
    let text = "";
    let id = "";
    let model = "";
    for await (const chunk of chunks) {
      id = chunk.id;
      model = chunk.model;
      text += chunk.choices[0]?.delta.content ?? "";
    }
    return { id, text, model };
  }
  if (format === "responses") {
    if (!stream) {
      const response = await context.openai.responses.create({ model: TEST_MODEL, input });
      return { id: response.id, text: response.output_text, model: response.model };
    }
    const events = await context.openai.responses.create({ model: TEST_MODEL, input, stream: true });
    let text = "";
    let id = "";
    let model = "";
    for await (const event of events) {
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") {
        id = event.response.id;
        model = event.response.model;
      }
    }
    return { id, text, model };
  }
  const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
  if (!stream) {
    const message = await anthropic.messages.create({
      model: TEST_MODEL,
      max_tokens: 256,
      messages: [{ role: "user", content: input }],
    });
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    return { id: message.id, text, model: message.model };
  }
  const message = await anthropic.messages
    .stream({ model: TEST_MODEL, max_tokens: 256, messages: [{ role: "user", content: input }] })
    .finalMessage();
  const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return { id: message.id, text, model: message.model };
}

function registerFailoverMatrix(
  title: string,
  streams: readonly boolean[],
  failures: typeof FAILURES,
  options: { keepAliveMs?: number } = {},
): void {
  forEachGatewayMode(
    title,
    async (context, t) => {
      for (const format of ["chat completions", "responses", "messages"] as const) {
        for (const stream of streams) {
          for (const failure of failures) {
            await t.test(
              `${format}, ${stream ? "streamed" : "not streamed"}: first route ${failure.name}`,
              async () => {
                context.upstream.enqueue(failure.reply());
                const served = backup.requests.length;
                const answer = await ask(context, format, stream);
                assert.equal(answer.text, DEFAULT_REPLY_TEXT, "one ordinary answer, from the second route");
                assert.equal(answer.model, TEST_MODEL);
                assert.equal(backup.requests.length, served + 1, "the second route was called once");
                const record = await readFinal(context, answer.id);
                assert.equal(record.status, "ok");
                assert.equal(record.upstream_provider, "backup");
                assert.deepEqual(
                  record.attempts.map((attempt) => [
                    attempt.provider,
                    attempt.upstream_model,
                    attempt.outcome,
                  ]),
                  [
                    ["fake", "first-upstream-model", failure.outcome],
                    ["backup", "second-upstream-model", "ok"],
                  ],
                );
                if (failure.outcome === "provider_timeout") {
                  assert.ok(
                    record.attempts[0].latency_ms >= FIRST_BYTE_MS - 50,
                    "waited the first-byte deadline",
                  );
                }
                // The fake's default usage, at the catalog's prices: one attempt billed, not two.
                assert.ok(Number(record.cost_micro_usd) > 0);
              },
            );
          }
        }
      }
    },
    { configOverrides: createCatalog, ...options },
  );
}

registerFailoverMatrix(
  "a failing first route is failed over to the second, in every format, streamed and not",
  [false, true],
  FAILURES,
);

// The response starts (headers, keep-alive comments) before the first route's first-byte
// deadline: no output has reached the client, so the run still fails over.
registerFailoverMatrix(
  "a stalled first route is failed over even after the stream started with keep-alives only",
  [true],
  FAILURES.filter((failure) => failure.outcome === "provider_timeout"),
  { keepAliveMs: 100 },
);

forEachGatewayMode(
  "when every route fails, the caller gets the last classified error with Retry-After",
  async (context, t) => {
    await t.test(
      "both routes overloaded: 529 provider_overloaded, nothing billed, all attempts recorded",
      async () => {
        const overloaded = () =>
          fakeReply.error(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
        // Two passes (routing.retries 1) over the two routes.
        context.upstream.enqueue(overloaded(), overloaded());
        backup.enqueue(overloaded(), overloaded());
        const response = await fetch(`${context.url}/api/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
        });
        const body = (await response.json()) as { error: { code: string } };
        assert.equal(response.status, 529);
        assert.equal(body.error.code, "provider_overloaded");
        assert.ok(response.headers.get("retry-after"), "Retry-After is set");
        const id = response.headers.get("x-request-id")!;
        const record = await readFinal(context, id);
        assert.equal(record.status, "error");
        assert.equal(record.cost_micro_usd, "0");
        assert.deepEqual(
          record.attempts.map((attempt) => `${attempt.provider}:${attempt.outcome}`),
          [
            "fake:provider_overloaded",
            "backup:provider_overloaded",
            "fake:provider_overloaded",
            "backup:provider_overloaded",
          ],
        );
      },
    );
  },
  { configOverrides: createCatalog },
);

forEachGatewayMode(
  "alternatives named in models: allowed ones serve after the model's routes, others are refused up front",
  async (context, t) => {
    const unavailable = () => fakeReply.error(503, { error: { message: "Service Unavailable" } });
    await t.test(
      "both routes of the model fail: the named alternative serves and the response says so",
      async () => {
        context.upstream.enqueue(unavailable());
        backup.enqueue(unavailable());
        const completion = await context.openai.chat.completions.create({
          model: TEST_MODEL,
          models: [ALT_MODEL],
          messages: [{ role: "user", content: "hi" }],
        } as never);
        assert.equal(completion.model, ALT_MODEL);
        assert.equal(completion.choices[0].message.content, DEFAULT_REPLY_TEXT);
        assert.equal(backup.requests.at(-1)?.body.model, "alt-upstream-model");
        const record = await readFinal(context, completion.id);
        assert.deepEqual(
          record.attempts.map((attempt) => `${attempt.model}:${attempt.outcome}`),
          [`${TEST_MODEL}:provider_unavailable`, `${TEST_MODEL}:provider_unavailable`, `${ALT_MODEL}:ok`],
        );
      },
    );

    await t.test("an alternative the key may not use is refused before anything is sent", async () => {
      await context.admin.updateKey(context.keyId, { models: [TEST_MODEL] });
      const sent = context.upstream.requests.length + backup.requests.length;
      const error = await context.openai.chat.completions
        .create({
          model: TEST_MODEL,
          models: [ALT_MODEL],
          messages: [{ role: "user", content: "hi" }],
        } as never)
        .then(
          () => assert.fail("expected model_not_allowed"),
          (thrown: { status: number; error: { code: string; param: string } }) => thrown,
        );
      assert.equal(error.status, 403);
      assert.equal(error.error.code, "model_not_allowed");
      assert.equal(error.error.param, "models[0]");
      assert.equal(context.upstream.requests.length + backup.requests.length, sent, "no upstream was called");
    });
  },
  { configOverrides: createCatalog },
);
