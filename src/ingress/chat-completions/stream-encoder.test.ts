import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import type { CanonicalStreamPart, CanonicalUsage } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext } from "../ingress-format.js";
import { createChatStreamEncoder } from "./stream-encoder.js";

const context: EncodeContext = { requestId: "req_123", model: "openai/gpt-4o", createdAt: 1_700_000_000 };

const usage: CanonicalUsage = {
  inputTokens: 120,
  outputTokens: 45,
  cachedInputTokens: 100,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 10,
};

const settlement: Settlement = { usage, costMicroUsd: 1234, finishReason: "tool-calls" };

/** Text, then two parallel tool calls whose argument fragments interleave, then usage and finish. */
const parallelToolTurn: CanonicalStreamPart[] = [
  { type: "response-metadata", upstreamId: "up_1", upstreamModel: "gpt-4o-2024-08-06" },
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: "Checking " },
  { type: "text-delta", id: "t1", delta: "both." },
  { type: "text-end", id: "t1" },
  { type: "tool-input-start", id: "call_a", index: 0, name: "get_weather" },
  { type: "tool-input-start", id: "call_b", index: 1, name: "get_time" },
  { type: "tool-input-delta", id: "call_a", delta: '{"city":' },
  { type: "tool-input-delta", id: "call_b", delta: '{"tz": ' },
  { type: "tool-input-delta", id: "call_a", delta: '"Paris"}' },
  { type: "tool-input-delta", id: "call_b", delta: '"Europe/Paris" }' },
  { type: "tool-input-end", id: "call_a" },
  { type: "tool-input-end", id: "call_b" },
  { type: "tool-call", id: "call_a", index: 0, name: "get_weather", arguments: '{"city":"Paris"}' },
  { type: "tool-call", id: "call_b", index: 1, name: "get_time", arguments: '{"tz": "Europe/Paris" }' },
  { type: "usage", usage },
  { type: "finish", reason: "tool-calls" },
];

function encodeStream(
  parts: CanonicalStreamPart[],
  end: (encoder: ReturnType<typeof createChatStreamEncoder>) => string,
) {
  const encoder = createChatStreamEncoder(context);
  let text = "";
  for (const part of parts) text += encoder.push(part);
  return text + end(encoder);
}

/** An official SDK client whose every request is answered with `sseText`. */
function createClient(sseText: string): OpenAI {
  return new OpenAI({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    maxRetries: 0,
    fetch: async () => new Response(sseText, { headers: { "content-type": "text/event-stream" } }),
  });
}

const params = { model: "openai/gpt-4o", messages: [{ role: "user" as const, content: "Hi" }] };

interface ChunkFrame {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }>;
  usage?: unknown;
  error?: unknown;
}

/** The JSON payloads of the `data:` frames, `[DONE]` as a string. */
function parseFrames(sseText: string): Array<ChunkFrame | "[DONE]"> {
  assert.ok(sseText.endsWith("\n\n"), "frames end with a blank line");
  return sseText
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      assert.ok(frame.startsWith("data: "), `frame is a data line: ${frame}`);
      const data = frame.slice("data: ".length);
      return data === "[DONE]" ? data : JSON.parse(data);
    });
}

test("the SDK's ChatCompletionStream assembles text and two interleaved parallel tool calls", async () => {
  const sse = encodeStream(parallelToolTurn, (encoder) => encoder.finish(settlement));
  const stream = createClient(sse).chat.completions.stream(params);
  const completion = await stream.finalChatCompletion();
  assert.equal(completion.id, "gen-req_123");
  assert.equal(completion.model, "openai/gpt-4o");
  assert.equal(completion.created, 1_700_000_000);
  assert.equal(completion.choices.length, 1);
  const [choice] = completion.choices;
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.role, "assistant");
  assert.equal(choice.message.content, "Checking both.");
  assert.deepEqual(
    choice.message.tool_calls?.map((call) => (call.type === "function" ? [call.id, call.function] : call)),
    [
      ["call_a", { name: "get_weather", arguments: '{"city":"Paris"}' }],
      ["call_b", { name: "get_time", arguments: '{"tz": "Europe/Paris" }' }],
    ],
  );
});

test("create({stream: true}) yields the usage-only chunk last, with cost, and [DONE] ends the stream", async () => {
  const sse = encodeStream(parallelToolTurn, (encoder) => encoder.finish(settlement));
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of await createClient(sse).chat.completions.create({ ...params, stream: true })) {
    chunks.push(chunk);
  }
  const last = chunks[chunks.length - 1];
  assert.deepEqual(last.choices, []);
  assert.deepEqual(last.usage, {
    prompt_tokens: 120,
    completion_tokens: 45,
    total_tokens: 165,
    prompt_tokens_details: { cached_tokens: 100 },
    completion_tokens_details: { reasoning_tokens: 10 },
    cost: 0.001234,
  });
  const finishChunks = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
  assert.equal(finishChunks.length, 1, "exactly one finish_reason");
  assert.deepEqual(finishChunks[0].choices[0].delta, {});
  assert.ok(
    chunks.slice(0, -1).every((chunk) => chunk.usage === undefined),
    "only the last chunk has usage",
  );
  assert.ok(sse.endsWith("data: [DONE]\n\n"));
});

test("frames follow the wire order: one role frame first, tool calls open with id, type, name and empty arguments", () => {
  const sse = encodeStream(parallelToolTurn, (encoder) => encoder.finish(settlement));
  const frames = parseFrames(sse);
  assert.equal(frames.pop(), "[DONE]");
  const chunks = frames as ChunkFrame[];
  for (const frame of chunks) {
    assert.equal(frame.id, "gen-req_123");
    assert.equal(frame.object, "chat.completion.chunk");
    assert.equal(frame.created, 1_700_000_000);
    assert.equal(frame.model, "openai/gpt-4o");
  }
  assert.deepEqual(chunks[0].choices, [
    { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
  ]);
  const deltas = chunks.slice(1, -1).map((frame) => frame.choices[0].delta);
  assert.ok(
    deltas.every((delta) => !("role" in delta)),
    "role is sent once",
  );
  assert.deepEqual(deltas, [
    { content: "Checking " },
    { content: "both." },
    {
      tool_calls: [
        { index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } },
      ],
    },
    {
      tool_calls: [
        { index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "" } },
      ],
    },
    { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{"tz": ' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '"Europe/Paris" }' } }] },
    {},
  ]);
  assert.equal(chunks[chunks.length - 2].choices[0].finish_reason, "tool_calls");
});

test("a tool call that was never streamed is opened and sent whole; a tool-first turn starts with content null", async () => {
  const sse = encodeStream(
    [
      { type: "tool-call", id: "call_z", index: 0, name: "lookup", arguments: '{"q":"x"}' },
      { type: "finish", reason: "tool-calls" },
    ],
    (encoder) => encoder.finish(settlement),
  );
  const frames = parseFrames(sse) as ChunkFrame[];
  assert.deepEqual(frames[0].choices[0].delta, { role: "assistant", content: null });
  const completion = await createClient(sse).chat.completions.stream(params).finalChatCompletion();
  const call = completion.choices[0].message.tool_calls?.[0];
  assert.ok(call?.type === "function");
  assert.deepEqual([call.id, call.function.name, call.function.arguments], ["call_z", "lookup", '{"q":"x"}']);
  assert.equal(completion.choices[0].message.content, null);
});

test("final tool-call arguments that extend the streamed ones are completed", async () => {
  const sse = encodeStream(
    [
      { type: "tool-input-start", id: "c", index: 0, name: "noop" },
      { type: "tool-input-end", id: "c" },
      { type: "tool-call", id: "c", index: 0, name: "noop", arguments: "{}" },
    ],
    (encoder) => encoder.finish(settlement),
  );
  const completion = await createClient(sse).chat.completions.stream(params).finalChatCompletion();
  const call = completion.choices[0].message.tool_calls?.[0];
  assert.ok(call?.type === "function");
  assert.equal(call.function.arguments, "{}");
});

test("finish() without a finish part emits the settlement's finish reason; an empty stream still parses", async () => {
  const sse = encodeStream([{ type: "text-delta", id: "t", delta: "Hi" }], (encoder) =>
    encoder.finish({ ...settlement, finishReason: "length" }),
  );
  const completion = await createClient(sse).chat.completions.stream(params).finalChatCompletion();
  assert.equal(completion.choices[0].finish_reason, "length");
  assert.equal(completion.choices[0].message.content, "Hi");

  const empty = encodeStream([], (encoder) => encoder.finish({ ...settlement, finishReason: "stop" }));
  const emptyCompletion = await createClient(empty).chat.completions.stream(params).finalChatCompletion();
  assert.equal(emptyCompletion.choices[0].finish_reason, "stop");
  assert.equal(emptyCompletion.choices[0].message.role, "assistant");
});

test("reasoning streams as delta.reasoning; provider state goes out once as reasoning_details before the finish", () => {
  const state = { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", signature: "sig" };
  const sse = encodeStream(
    [
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-delta", id: "r1", delta: "Let me " },
      { type: "reasoning-delta", id: "r1", delta: "think." },
      { type: "reasoning-end", id: "r1", providerState: state },
      { type: "reasoning-start", id: "r2" },
      {
        type: "reasoning-end",
        id: "r2",
        providerState: { ...state, signature: undefined, redactedData: "xyz" },
      },
      { type: "text-delta", id: "t", delta: "Answer" },
      { type: "finish", reason: "stop" },
    ],
    (encoder) => encoder.finish({ ...settlement, finishReason: "stop" }),
  );
  const deltas = (parseFrames(sse).slice(0, -2) as ChunkFrame[]).map((frame) => frame.choices[0].delta);
  assert.deepEqual(deltas, [
    { role: "assistant", content: "" },
    { reasoning: "Let me " },
    { reasoning: "think." },
    { content: "Answer" },
    {
      reasoning_details: [
        {
          type: "reasoning.text",
          provider_kind: "anthropic",
          upstream_model: "claude-sonnet-4-5",
          text: "Let me think.",
          signature: "sig",
        },
        {
          type: "reasoning.encrypted",
          provider_kind: "anthropic",
          upstream_model: "claude-sonnet-4-5",
          data: "xyz",
        },
      ],
    },
    {},
  ]);
});

test("reasoning without provider state sends no reasoning_details", () => {
  const sse = encodeStream(
    [
      { type: "reasoning-delta", id: "r", delta: "hmm" },
      { type: "reasoning-end", id: "r" },
      { type: "finish", reason: "stop" },
    ],
    (encoder) => encoder.finish(settlement),
  );
  assert.ok(!sse.includes("reasoning_details"));
});

test("fail() sends the common error envelope and nothing after it; the SDK throws APIError", async () => {
  const encoder = createChatStreamEncoder(context);
  let sse = encoder.push({ type: "text-delta", id: "t", delta: "partial" });
  sse += encoder.fail(new GatewayError("provider_unavailable", "The upstream provider failed"));
  assert.equal(encoder.push({ type: "text-delta", id: "t", delta: "late" }), "");
  assert.equal(encoder.finish(settlement), "");
  assert.equal(encoder.keepAlive(), "");
  const frames = parseFrames(sse);
  assert.deepEqual(frames[frames.length - 1], {
    error: {
      message: "The upstream provider failed",
      type: "api_error",
      code: "provider_unavailable",
      param: null,
      request_id: "req_123",
      retry_after_seconds: 1,
    },
  });

  const stream = createClient(sse).chat.completions.stream(params);
  await assert.rejects(stream.finalChatCompletion(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.code, "provider_unavailable");
    assert.match(error.message, /The upstream provider failed/);
    return true;
  });
});

test("keepAlive() is an SSE comment the SDK ignores", async () => {
  const encoder = createChatStreamEncoder(context);
  assert.equal(encoder.keepAlive(), ": keep-alive\n\n");
  const sse =
    encoder.keepAlive() +
    encoder.push({ type: "text-delta", id: "t", delta: "ok" }) +
    encoder.keepAlive() +
    encoder.finish({ ...settlement, finishReason: "stop" });
  const completion = await createClient(sse).chat.completions.stream(params).finalChatCompletion();
  assert.equal(completion.choices[0].message.content, "ok");
});

test("usage, metadata and lifecycle parts print nothing once the role frame is out", () => {
  const encoder = createChatStreamEncoder(context);
  assert.notEqual(
    encoder.push({ type: "response-metadata" }),
    "",
    "the first part of any kind opens with the role",
  );
  for (const part of [
    { type: "text-start", id: "t" },
    { type: "text-end", id: "t" },
    { type: "reasoning-start", id: "r" },
    { type: "usage", usage },
    { type: "response-metadata", upstreamModel: "m" },
    { type: "error", error: { code: "provider_unavailable", message: "x" } },
  ] satisfies CanonicalStreamPart[]) {
    assert.equal(encoder.push(part), "", part.type);
  }
});

test("nothing follows [DONE]: fail(), finish() and keepAlive() after finish() print nothing", () => {
  const encoder = createChatStreamEncoder(context);
  encoder.push({ type: "text-delta", id: "t", delta: "x" });
  assert.ok(encoder.finish(settlement).endsWith("data: [DONE]\n\n"));
  assert.equal(encoder.fail(new GatewayError("internal_error", "late")), "");
  assert.equal(encoder.finish(settlement), "");
  assert.equal(encoder.keepAlive(), "");
  assert.equal(encoder.push({ type: "text-delta", id: "t", delta: "y" }), "");
});
