import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiCompatibleAdapter } from "./adapter.js";

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createOpenAiCompatibleAdapter({ httpClient });

before(async () => {
  upstream = await startFakeOpenAiUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

function callFor(options: { provider?: Partial<ProviderConfig>; signal?: AbortSignal } = {}): UpstreamCall {
  return createTestCall({
    provider: { baseUrl: upstream.baseUrl, ...options.provider },
    signal: options.signal,
  });
}

async function collect(call: UpstreamCall): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(call)) parts.push(part);
  return parts;
}

function textOf(parts: CanonicalStreamPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
}

function toolChunk(index: number, fields: Record<string, unknown>) {
  return buildChunk({ tool_calls: [{ index, ...fields }] });
}

test("generate: sends the Chat Completions request and parses the answer", async () => {
  upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Bonjour", model: "gpt-x-2025" })));
  const before = upstream.requests.length;
  const result = await adapter.generate(callFor());
  const request = upstream.requests[before];
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/v1/chat/completions");
  assert.equal(request.headers.authorization, "Bearer sk-test-key-0123456789");
  assert.equal(request.headers["x-request-id"], "req_test_0001");
  assert.equal(request.headers["x-gateway-request-id"], "req_test_0001");
  assert.equal(request.body.model, "upstream-model-1");
  assert.equal(request.body.max_completion_tokens, 1024);
  assert.equal(request.body.stream, undefined);
  assert.deepEqual(result.content, [{ type: "text", text: "Bonjour" }]);
  assert.equal(result.upstreamModel, "gpt-x-2025");
  assert.equal(result.finishReason, "stop");
  assert.equal(result.usage.inputTokens, 10);
});

test("stream: text, with usage requested upstream and usage-only chunk read", async () => {
  upstream.enqueue(
    fakeReply.sse(
      buildTextChunks(["Hel", "lo ", "wörld"], {
        usage: {
          prompt_tokens: 4020,
          completion_tokens: 238,
          prompt_tokens_details: { cached_tokens: 4012, cache_write_tokens: 3 },
          completion_tokens_details: { reasoning_tokens: 192 },
        },
      }),
    ),
  );
  const before = upstream.requests.length;
  const parts = await collect(callFor());
  const request = upstream.requests[before];
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.stream_options, { include_usage: true });
  assert.equal(request.headers.accept, "text/event-stream");
  assert.equal(parts[0].type, "response-metadata");
  assert.equal(textOf(parts), "Hello wörld");
  assert.deepEqual(parts.slice(-2), [
    {
      type: "usage",
      usage: {
        inputTokens: 4020,
        outputTokens: 238,
        cachedInputTokens: 4012,
        cacheWriteTokens: 3,
        cacheWrite1hTokens: 0,
        reasoningTokens: 192,
      },
    },
    { type: "finish", reason: "stop", rawReason: "stop" },
  ]);
});

test("stream: reasoning_content then text", async () => {
  upstream.enqueue(
    fakeReply.sse([
      buildChunk({ role: "assistant", content: null, reasoning_content: "Hmm, " }),
      buildChunk({ reasoning_content: "two plus two." }),
      buildChunk({ content: "4" }),
      buildChunk({}, { finishReason: "stop" }),
      buildUsageChunk(),
    ]),
  );
  const parts = await collect(callFor());
  const reasoning = parts.flatMap((part) => (part.type === "reasoning-delta" ? [part.delta] : [])).join("");
  assert.equal(reasoning, "Hmm, two plus two.");
  assert.equal(textOf(parts), "4");
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("reasoning-end") < types.indexOf("text-start"));
});

test("stream: a tool call", async () => {
  upstream.enqueue(
    fakeReply.sse([
      buildChunk({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            index: 0,
            id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
            type: "function",
            function: { name: "get_capital", arguments: "" },
          },
        ],
      }),
      toolChunk(0, { function: { arguments: '{"' } }),
      toolChunk(0, { function: { arguments: 'country":"' } }),
      toolChunk(0, { function: { arguments: 'UK"}' } }),
      buildChunk({}, { finishReason: "tool_calls" }),
      buildUsageChunk(),
    ]),
  );
  const parts = await collect(callFor());
  assert.deepEqual(
    parts.filter((part) => part.type !== "tool-input-delta" && part.type !== "usage"),
    [
      {
        type: "response-metadata",
        upstreamId: "chatcmpl-fake0000000000000000000000001",
        upstreamModel: "fake-model-2025-01-01",
      },
      { type: "tool-input-start", id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", index: 0, name: "get_capital" },
      { type: "tool-input-end", id: "call_ZR5UUuTt3pf61kjwAJIYdVMj" },
      {
        type: "tool-call",
        id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
        index: 0,
        name: "get_capital",
        arguments: '{"country":"UK"}',
      },
      { type: "finish", reason: "tool-calls", rawReason: "tool_calls" },
    ],
  );
});

test("stream: two parallel tool calls with interleaved deltas", async () => {
  upstream.enqueue(
    fakeReply.sse([
      toolChunk(0, { id: "call_a", type: "function", function: { name: "search", arguments: "" } }),
      toolChunk(1, { id: "call_b", type: "function", function: { name: "fetch", arguments: "" } }),
      toolChunk(1, { function: { arguments: '{"url":' } }),
      toolChunk(0, { function: { arguments: '{"q":' } }),
      toolChunk(0, { function: { arguments: '"cats"}' } }),
      toolChunk(1, { function: { arguments: '"https://x"}' } }),
      buildChunk({}, { finishReason: "tool_calls" }),
      buildUsageChunk(),
    ]),
  );
  const parts = await collect(callFor());
  const calls = parts.flatMap((part) =>
    part.type === "tool-call" ? [[part.id, part.index, part.name, part.arguments]] : [],
  );
  assert.deepEqual(calls, [
    ["call_a", 0, "search", '{"q":"cats"}'],
    ["call_b", 1, "fetch", '{"url":"https://x"}'],
  ]);
});

test("stream: the four argument-delta edge shapes through the wire", async () => {
  upstream.enqueue(
    fakeReply.sse([
      // (a) arguments null on the opening delta
      toolChunk(0, { id: "call_a", type: "function", function: { name: "alpha", arguments: null } }),
      toolChunk(0, { function: { arguments: '{"x":1}' } }),
      // (b) name and full arguments re-sent later
      toolChunk(1, { id: "call_b", type: "function", function: { name: "beta", arguments: '{"y":' } }),
      toolChunk(1, { function: { name: "beta", arguments: "2}" } }),
      toolChunk(1, { function: { name: "beta", arguments: '{"y":2}' } }),
      // (c) arguments as an object
      toolChunk(2, { id: "call_c", type: "function", function: { name: "gamma", arguments: { z: [1, 2] } } }),
      // (d) fragments without a leading {"
      toolChunk(3, { id: "call_d", type: "function", function: { name: "delta", arguments: "" } }),
      toolChunk(3, { function: { arguments: "{" } }),
      toolChunk(3, { function: { arguments: '"w' } }),
      toolChunk(3, { function: { arguments: '": tr' } }),
      toolChunk(3, { function: { arguments: "ue}" } }),
      buildChunk({}, { finishReason: "tool_calls" }),
      buildUsageChunk(),
    ]),
  );
  const parts = await collect(callFor());
  const calls = parts.flatMap((part) => (part.type === "tool-call" ? [[part.name, part.arguments]] : []));
  assert.deepEqual(calls, [
    ["alpha", '{"x":1}'],
    ["beta", '{"y":2}'],
    ["gamma", '{"z":[1,2]}'],
    ["delta", '{"w": true}'],
  ]);
  for (const [, args] of calls) assert.doesNotThrow(() => JSON.parse(args));
});

for (const [status, body, headers, code, retryAfter] of [
  [
    401,
    {
      error: {
        message: "Incorrect API key provided: sk-abc***",
        type: "invalid_request_error",
        code: "invalid_api_key",
      },
    },
    {},
    "provider_auth",
    undefined,
  ],
  [
    429,
    { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
    { "retry-after": "17" },
    "provider_rate_limit",
    17,
  ],
  [
    500,
    { error: { message: "The server had an error", type: "server_error" } },
    {},
    "provider_unavailable",
    1,
  ],
  [
    529,
    { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    {},
    "provider_overloaded",
    1,
  ],
  [
    400,
    {
      error: {
        message: "This model's maximum context length is 8192 tokens.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
    {},
    "context_length_exceeded",
    undefined,
  ],
] as const) {
  test(`upstream HTTP ${status} → ${code}, for generate and before the first stream part`, async () => {
    upstream.enqueue(fakeReply.error(status, body, headers), fakeReply.error(status, body, headers));
    const expected = (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, code);
      assert.equal(error.upstreamStatus, status);
      assert.equal(error.retryAfterSeconds, retryAfter);
      assert.doesNotMatch(error.message, /sk-/);
      return true;
    };
    await assert.rejects(adapter.generate(callFor()), expected);
    await assert.rejects(collect(callFor()), expected);
  });
}

test("connection refused → provider_unavailable", async () => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
  const call = createTestCall({ provider: { baseUrl: `http://127.0.0.1:${port}/v1` } });
  await assert.rejects(adapter.generate(call), { code: "provider_unavailable", message: /refused/ });
  await assert.rejects(collect(call), { code: "provider_unavailable" });
});

test("first-byte deadline → provider_timeout", async () => {
  upstream.enqueue(fakeReply.hang(), fakeReply.hang());
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 150, responseMs: 150, idleMs: 5000 } };
  await assert.rejects(adapter.generate(callFor({ provider })), { code: "provider_timeout" });
  await assert.rejects(collect(callFor({ provider })), { code: "provider_timeout" });
});

test("idle deadline: stall after headers is thrown, stall after content is an error part", async () => {
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 2000, responseMs: 2000, idleMs: 200 } };
  upstream.enqueue(fakeReply.sse([buildChunk({ role: "assistant", content: "" }), { hang: true }]));
  await assert.rejects(collect(callFor({ provider })), { code: "provider_timeout" });

  upstream.enqueue(
    fakeReply.sse([
      buildChunk({ role: "assistant", content: "" }),
      buildChunk({ content: "Par" }),
      { hang: true },
    ]),
  );
  const parts = await collect(callFor({ provider }));
  assert.equal(textOf(parts), "Par");
  const last = parts.at(-1);
  assert.equal(last?.type, "error");
  assert.equal(last?.type === "error" ? last.error.code : "", "provider_timeout");
  assert.ok(!parts.some((part) => part.type === "finish"));
});

test("slow but steady chunks within the idle deadline succeed", async () => {
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 2000, responseMs: 2000, idleMs: 300 } };
  const [role, ...rest] = buildTextChunks(["a", "b", "c"]);
  upstream.enqueue(fakeReply.sse([role, ...rest.flatMap((item) => [{ delayMs: 120 }, item])]));
  const parts = await collect(callFor({ provider }));
  assert.equal(textOf(parts), "abc");
  assert.equal(parts.at(-1)?.type, "finish");
});

test("finished streams give their connection back: the next request reuses it", async () => {
  const before = upstream.requests.length;
  // As providers do: `[DONE]` is flushed first, the body's end follows a moment later.
  const events = buildTextChunks(["a", "b"]).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  const body = `${events.join("")}data: [DONE]\n\n`;
  for (let index = 0; index < 3; index++) {
    upstream.enqueue(fakeReply.raw(body, { chunkDelayMs: 15 }));
    const parts = await collect(callFor());
    assert.equal(parts.at(-1)?.type, "finish");
    // Once the body's end has arrived, the connection is idle again.
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  const ports = upstream.requests.slice(before).map((request) => request.remotePort);
  assert.equal(ports.length, 3);
  // One TCP (with TLS: one handshake) for all three, instead of a new connection per stream.
  assert.deepEqual(new Set(ports).size, 1, `ports ${ports.join(", ")}`);
});

test("abort mid-stream stops quietly and closes the upstream connection", async () => {
  upstream.enqueue(
    fakeReply.sse([
      buildChunk({ role: "assistant", content: "" }),
      buildChunk({ content: "first" }),
      { delayMs: 5000 },
      buildChunk({ content: "never" }),
    ]),
  );
  const controller = new AbortController();
  const before = upstream.requests.length;
  const parts: CanonicalStreamPart[] = [];
  const started = Date.now();
  for await (const part of adapter.stream(callFor({ signal: controller.signal }))) {
    parts.push(part);
    if (part.type === "text-delta") controller.abort();
  }
  assert.ok(Date.now() - started < 3000, "the stream ended at once");
  assert.equal(textOf(parts), "first");
  assert.ok(!parts.some((part) => part.type === "error" || part.type === "finish"));
  const request = upstream.requests[before];
  await request.closed;
  assert.equal(request.closedBeforeEnd, true);
});

test("abort while waiting for headers: the stream ends empty, generate rejects with the reason", async () => {
  upstream.enqueue(fakeReply.hang(), fakeReply.hang());
  const streamController = new AbortController();
  setTimeout(() => streamController.abort(), 100);
  assert.deepEqual(await collect(callFor({ signal: streamController.signal })), []);

  const generateController = new AbortController();
  const reason = new Error("cancelled by client");
  setTimeout(() => generateController.abort(reason), 100);
  await assert.rejects(
    adapter.generate(callFor({ signal: generateController.signal })),
    (error) => error === reason,
  );
});

test("socket closed mid-stream → provider_unavailable error part", async () => {
  // The pause lets "Hi" reach the client before the reset (a reset discards unread buffers).
  upstream.enqueue(fakeReply.sse([buildChunk({ content: "Hi" }), { delayMs: 50 }, { closeSocket: true }]));
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_unavailable");
});

test("stream that ends without finish_reason → error part", async () => {
  upstream.enqueue(fakeReply.sse([buildChunk({ content: "Hi" })]));
  const parts = await collect(callFor());
  const last = parts.at(-1);
  assert.deepEqual(last?.type === "error" ? [last.error.code, last.error.message] : last, [
    "provider_unavailable",
    "upstream stream ended early",
  ]);
});

test("in-stream error frame: thrown before content, an error part after it", async () => {
  const frame = { error: { message: "Rate limit", type: "tokens", code: "rate_limit_exceeded" } };
  upstream.enqueue(fakeReply.sse([buildChunk({ role: "assistant", content: "" }), frame], { done: false }));
  await assert.rejects(collect(callFor()), { code: "provider_rate_limit" });

  upstream.enqueue(
    fakeReply.sse([buildChunk({ content: "Hi" }), frame, buildChunk({ content: "ignored" })], {
      done: false,
    }),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_rate_limit");
});

test("redirects are not followed", async () => {
  upstream.enqueue(
    fakeReply.json({}, { status: 307, headers: { location: `${upstream.baseUrl}/elsewhere` } }),
  );
  const before = upstream.requests.length;
  await assert.rejects(adapter.generate(callFor()), { code: "provider_unavailable" });
  assert.equal(upstream.requests.length, before + 1);
});

test("a host that answers a stream request with JSON still yields a well-formed stream", async () => {
  upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "whole" })));
  const parts = await collect(callFor());
  assert.deepEqual(
    parts.map((part) => part.type),
    ["response-metadata", "text-start", "text-delta", "text-end", "usage", "finish"],
  );
  assert.equal(textOf(parts), "whole");
});

test("generate: a body that is not JSON → provider_unavailable", async () => {
  upstream.enqueue(fakeReply.raw("<html>gateway</html>", { headers: { "content-type": "text/html" } }));
  await assert.rejects(adapter.generate(callFor()), { code: "provider_unavailable" });
});
