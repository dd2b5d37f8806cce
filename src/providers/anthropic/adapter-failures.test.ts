/** The anthropic adapter against the fake upstream: HTTP errors, in-stream errors, deadlines, aborts. */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall, createTestModel } from "../../../test/helpers/adapter-inputs.js";
import {
  anthropicReply,
  errorEvent,
  type FakeAnthropicUpstream,
  messageStartEvent,
  pingEvent,
  startFakeAnthropicUpstream,
  textBlockEvents,
} from "../../../test/helpers/fake-anthropic-upstream.js";
import type { CanonicalRequest, CanonicalStreamPart } from "../../canonical/index.js";
import type { ModelFeature, ProviderConfig } from "../../catalog/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createAnthropicAdapter } from "./adapter.js";

let upstream: FakeAnthropicUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createAnthropicAdapter({ httpClient });

before(async () => {
  upstream = await startFakeAnthropicUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

function callFor(
  options: {
    request?: Partial<CanonicalRequest>;
    provider?: Partial<ProviderConfig>;
    signal?: AbortSignal;
    features?: ModelFeature[];
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: {
      kind: "anthropic",
      baseUrl: upstream.baseUrl,
      apiKey: "sk-ant-test-0123456789",
      ...options.provider,
    },
    signal: options.signal,
  });
  return { ...call, model: { ...createTestModel(), features: options.features ?? ["tools", "streaming"] } };
}

async function collect(call: UpstreamCall): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(call)) parts.push(part);
  return parts;
}

function textOf(parts: CanonicalStreamPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
}

for (const [status, type, message, headers, code, retryAfter] of [
  [529, "overloaded_error", "Overloaded", {}, "provider_overloaded", 1],
  [401, "authentication_error", "invalid x-api-key", {}, "provider_auth", undefined],
  [402, "billing_error", "Your credit balance is too low", {}, "provider_auth", undefined],
  [
    429,
    "rate_limit_error",
    "Number of request tokens has exceeded your rate limit",
    { "retry-after": "17" },
    "provider_rate_limit",
    17,
  ],
  [500, "api_error", "Internal server error", {}, "provider_unavailable", 1],
  [504, "timeout_error", "Request timed out", {}, "provider_timeout", 1],
  [
    400,
    "invalid_request_error",
    "prompt is too long: 215439 tokens > 200000 maximum",
    {},
    "context_length_exceeded",
    undefined,
  ],
] as const) {
  test(`upstream HTTP ${status} ${type} → ${code}, for generate and before the first stream part`, async () => {
    upstream.enqueue(
      anthropicReply.error(status, type, message, headers),
      anthropicReply.error(status, type, message, headers),
    );
    const expected = (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, code);
      assert.equal(error.upstreamStatus, status);
      assert.equal(error.retryAfterSeconds, retryAfter);
      return true;
    };
    await assert.rejects(adapter.generate(callFor()), expected);
    await assert.rejects(collect(callFor()), expected);
  });
}

test("HTTP 400 invalid_request_error → invalid_request with Anthropic's message", async () => {
  const message =
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.";
  upstream.enqueue(anthropicReply.error(400, "invalid_request_error", message));
  await assert.rejects(adapter.generate(callFor()), { code: "invalid_request", message });
});

test("event: error mid-stream → classified error part; before content → thrown", async () => {
  upstream.enqueue(
    anthropicReply.sse([messageStartEvent(), ...textBlockEvents(0, ["Hi"]).slice(0, 2), errorEvent()], {
      padding: true,
    }),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.deepEqual(last?.type === "error" ? [last.error.code, last.error.upstreamStatus] : last, [
    "provider_overloaded",
    529,
  ]);
  assert.ok(!parts.some((part) => part.type === "finish"));

  upstream.enqueue(
    anthropicReply.sse([messageStartEvent(), pingEvent(), errorEvent("api_error", "Internal error")]),
  );
  await assert.rejects(collect(callFor()), { code: "provider_unavailable" });
});

test("a request the adapter refuses never reaches the upstream", async () => {
  const before = upstream.requests.length;
  const call = {
    ...callFor({
      request: { reasoning: { effort: "low" }, tools: [{ name: "f" }], toolChoice: { type: "required" } },
      features: ["tools", "reasoning"],
    }),
    maxOutputTokens: 4096,
  };
  await assert.rejects(adapter.generate(call), { code: "invalid_request", param: "tool_choice" });
  await assert.rejects(collect(call), { code: "invalid_request", param: "tool_choice" });
  assert.equal(upstream.requests.length, before);
});

test("first-byte deadline → provider_timeout", async () => {
  upstream.enqueue(anthropicReply.hang(), anthropicReply.hang());
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 150, responseMs: 150, idleMs: 5000 } };
  await assert.rejects(adapter.generate(callFor({ provider })), { code: "provider_timeout" });
  await assert.rejects(collect(callFor({ provider })), { code: "provider_timeout" });
});

test("idle deadline: a stall after content is an error part", async () => {
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 2000, responseMs: 2000, idleMs: 200 } };
  upstream.enqueue(
    anthropicReply.sse([messageStartEvent(), ...textBlockEvents(0, ["Par"]).slice(0, 2), { hang: true }]),
  );
  const parts = await collect(callFor({ provider }));
  assert.equal(textOf(parts), "Par");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_timeout");
});

test("socket closed mid-stream → provider_unavailable error part", async () => {
  upstream.enqueue(
    anthropicReply.sse([
      messageStartEvent(),
      ...textBlockEvents(0, ["Hi"]).slice(0, 2),
      { delayMs: 50 },
      { closeSocket: true },
    ]),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_unavailable");
});

test("a stream that ends without message_stop → error part", async () => {
  upstream.enqueue(anthropicReply.sse([messageStartEvent(), ...textBlockEvents(0, ["Hi"])]));
  const parts = await collect(callFor());
  const last = parts.at(-1);
  assert.deepEqual(last?.type === "error" ? [last.error.code, last.error.message] : last, [
    "provider_unavailable",
    "upstream stream ended early",
  ]);
});

test("abort mid-stream stops quietly and closes the upstream connection", async () => {
  upstream.enqueue(
    anthropicReply.sse([
      messageStartEvent(),
      ...textBlockEvents(0, ["first"]).slice(0, 2),
      { delayMs: 5000 },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "never" } },
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
  upstream.enqueue(anthropicReply.hang(), anthropicReply.hang());
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
