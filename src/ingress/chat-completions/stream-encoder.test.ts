import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import {
  AFTER_TEXT,
  BEFORE_TEXT,
  GENERATED_BASE64,
  GENERATED_PNG,
  imageResults,
  imageToolRunParts,
} from "../../../test/helpers/image-tool-run.js";
import { loadOpenApiValidator } from "../../../test/helpers/openapi-schema-validator.js";
import type { CanonicalStreamPart, CanonicalUsage } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext } from "../ingress-format.js";
import { chatCompletionChunkSchema } from "./response-schema.js";
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

/**
 * A run with a server tool: round 1 says something and calls web_search; the engine yields the
 * call and its result; round 2 reasons and answers citing two sources (one span after an emoji,
 * so UTF-16 offsets differ from code points).
 */
function searchRun(events: boolean, outcome: "completed" | "failed" = "completed"): CanonicalStreamPart[] {
  const input = { query: "capital of France" };
  const result: Extract<CanonicalStreamPart, { type: "server-tool-result" }>["result"] =
    outcome === "completed"
      ? {
          callId: "call_1",
          tool: "web_search",
          input,
          status: "completed",
          output: {
            kind: "search",
            query: input.query,
            sources: [{ url: "https://example.com/fr", title: "France", snippet: "Paris…", pageAge: null }],
          },
          costMicroUsd: 5000,
          durationMs: 80,
          events,
        }
      : {
          callId: "call_1",
          tool: "web_search",
          input,
          status: "failed",
          error: { code: "unavailable", message: "The search backend did not answer." },
          costMicroUsd: 0,
          durationMs: 3000,
          events,
        };
  return [
    { type: "response-metadata", upstreamModel: "gpt-4o" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Let me look. " },
    { type: "text-end", id: "t1" },
    { type: "server-tool-call", call: { id: "call_1", tool: "web_search", input, events } },
    { type: "server-tool-result", result },
    { type: "reasoning-start", id: "r2" },
    { type: "reasoning-delta", id: "r2", delta: "Paris it is." },
    { type: "reasoning-end", id: "r2" },
    { type: "text-start", id: "t2" },
    { type: "text-delta", id: "t2", delta: "Paris 🇫🇷 is the capital " },
    { type: "text-delta", id: "t2", delta: "(example.com)." },
    {
      type: "citation",
      id: "t2",
      citation: {
        url: "https://example.com/fr",
        title: "France",
        startIndex: 26,
        endIndex: 39,
        citedText: "",
      },
    },
    { type: "text-delta", id: "t2", delta: " Big (wiki)." },
    {
      type: "citation",
      id: "t2",
      citation: {
        url: "https://wiki.test/p",
        title: "wiki.test",
        startIndex: 45,
        endIndex: 51,
        citedText: "",
      },
    },
    { type: "text-end", id: "t2" },
    { type: "usage", usage },
    { type: "finish", reason: "stop" },
  ];
}

const searchSettlement: Settlement = {
  usage,
  costMicroUsd: 6234,
  finishReason: "stop",
  serverToolCalls: { web_search: 1 },
};

const expectedAnnotations = [
  {
    type: "url_citation",
    url_citation: { url: "https://example.com/fr", title: "France", start_index: 39, end_index: 52 },
  },
  {
    type: "url_citation",
    url_citation: { url: "https://wiki.test/p", title: "wiki.test", start_index: 58, end_index: 64 },
  },
];

/** Every frame with its `event:` name (undefined for plain data frames) and its parsed data. */
function parseNamedFrames(
  sseText: string,
): Array<{ event: string | undefined; data: ChunkFrame | "[DONE]" }> {
  return sseText
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      const match = /^(?:event: ([^\n]+)\n)?data: ([^\n]*)$/.exec(frame);
      assert.ok(match, `frame is an optional event line and one data line: ${frame}`);
      return { event: match[1], data: match[2] === "[DONE]" ? "[DONE]" : JSON.parse(match[2]) };
    });
}

test("server tools with events: every round's text is one content, hi.tool_event frames in place, annotations once before the finish", () => {
  const frames = parseNamedFrames(
    encodeStream(searchRun(true), (encoder) => encoder.finish(searchSettlement)),
  );
  const envelope = {
    id: "gen-req_123",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "openai/gpt-4o",
  };
  const delta = (value: Record<string, unknown>, finishReason: string | null = null) => ({
    event: undefined,
    data: { ...envelope, choices: [{ index: 0, delta: value, logprobs: null, finish_reason: finishReason }] },
  });
  assert.deepEqual(frames, [
    delta({ role: "assistant", content: "" }),
    delta({ content: "Let me look. " }),
    {
      event: "hi.tool_event",
      data: {
        ...envelope,
        choices: [],
        hi_tool_event: {
          tool: "web_search",
          phase: "started",
          call_id: "call_1",
          input: { query: "capital of France" },
        },
      },
    },
    {
      event: "hi.tool_event",
      data: {
        ...envelope,
        choices: [],
        hi_tool_event: {
          tool: "web_search",
          phase: "completed",
          call_id: "call_1",
          input: { query: "capital of France" },
          output: { result_count: 1, urls: ["https://example.com/fr"] },
          cost_micro_usd: 5000,
          duration_ms: 80,
        },
      },
    },
    delta({ reasoning: "Paris it is." }),
    delta({ content: "Paris 🇫🇷 is the capital " }),
    delta({ content: "(example.com)." }),
    delta({ content: " Big (wiki)." }),
    delta({ annotations: expectedAnnotations }),
    delta({}, "stop"),
    {
      event: undefined,
      data: {
        ...envelope,
        choices: [],
        usage: {
          prompt_tokens: 120,
          completion_tokens: 45,
          total_tokens: 165,
          prompt_tokens_details: { cached_tokens: 100 },
          completion_tokens_details: { reasoning_tokens: 10 },
          cost: 0.006234,
        },
      },
    },
    { event: undefined, data: "[DONE]" },
  ]);
});

test("the hi.tool_event frame is byte-exact: event line, then the chunk envelope with empty choices and the payload", () => {
  const encoder = createChatStreamEncoder(context);
  encoder.push({ type: "text-delta", id: "t", delta: "x" });
  const [call] = searchRun(true).filter((part) => part.type === "server-tool-call");
  assert.equal(
    encoder.push(call),
    "event: hi.tool_event\n" +
      'data: {"id":"gen-req_123","object":"chat.completion.chunk","created":1700000000,"model":"openai/gpt-4o",' +
      '"choices":[],"hi_tool_event":{"tool":"web_search","phase":"started","call_id":"call_1",' +
      '"input":{"query":"capital of France"}}}\n\n',
  );
});

test("server tools without events write nothing for the call and the result", () => {
  const withTools = encodeStream(searchRun(false), (encoder) => encoder.finish(searchSettlement));
  const withoutTools = encodeStream(
    searchRun(false).filter((part) => part.type !== "server-tool-call" && part.type !== "server-tool-result"),
    (encoder) => encoder.finish(searchSettlement),
  );
  assert.equal(withTools, withoutTools);
  assert.ok(!withTools.includes("event:"));
});

test("a failed call's event carries the failure inside the payload, never a top-level error or usage", () => {
  const frames = parseNamedFrames(
    encodeStream(searchRun(true, "failed"), (encoder) => encoder.finish(searchSettlement)),
  );
  const events = frames
    .filter((frame) => frame.event === "hi.tool_event")
    .map((frame) => frame.data as ChunkFrame);
  assert.equal(events.length, 2);
  for (const event of events) {
    assert.deepEqual(Object.keys(event), ["id", "object", "created", "model", "choices", "hi_tool_event"]);
  }
  assert.deepEqual((events[1] as unknown as { hi_tool_event: unknown }).hi_tool_event, {
    tool: "web_search",
    phase: "failed",
    call_id: "call_1",
    input: { query: "capital of France" },
    error: { code: "unavailable", message: "The search backend did not answer." },
    cost_micro_usd: 0,
    duration_ms: 3000,
  });
});

test("citations in several text blocks and rounds index into the whole content; finish() alone also sends them", () => {
  const encoder = createChatStreamEncoder(context);
  const cite = (id: string, startIndex: number, endIndex: number): CanonicalStreamPart => ({
    type: "citation",
    id,
    citation: { url: `https://s.test/${id}`, title: id, startIndex, endIndex, citedText: "" },
  });
  let sse = "";
  for (const part of [
    { type: "text-start", id: "a" },
    { type: "text-delta", id: "a", delta: "𝄞 one [a]" },
    cite("a", 7, 10),
    { type: "text-end", id: "a" },
    { type: "text-delta", id: "b", delta: " two [b]" },
    cite("b", 5, 8),
    { type: "text-end", id: "b" },
    cite("gone", 0, 1),
  ] satisfies CanonicalStreamPart[]) {
    sse += encoder.push(part);
  }
  sse += encoder.finish({ ...searchSettlement, finishReason: "length" });
  const chunks = parseFrames(sse).slice(0, -1) as ChunkFrame[];
  const content = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
  const annotationChunks = chunks.filter((chunk) => chunk.choices[0]?.delta.annotations !== undefined);
  assert.equal(annotationChunks.length, 1, "annotations go out once");
  assert.equal(chunks.indexOf(annotationChunks[0]), chunks.length - 3, "just before the finish chunk");
  const annotations = annotationChunks[0].choices[0].delta.annotations as typeof expectedAnnotations;
  assert.deepEqual(
    annotations.map(({ url_citation: span }) => content.slice(span.start_index, span.end_index)),
    ["[a]", "[b]"],
    "a citation of a block that is not open has no place and is left out",
  );
});

test("a run without citations sends no annotations chunk", () => {
  const sse = encodeStream(
    searchRun(true).filter((part) => part.type !== "citation"),
    (encoder) => encoder.finish(searchSettlement),
  );
  assert.ok(!sse.includes("annotations"));
});

test("a stream that opens with a server-tool call still sends the role frame first", () => {
  const parts = searchRun(true).filter(
    (part) => part.type !== "response-metadata" && !("id" in part && part.id === "t1"),
  );
  const frames = parseNamedFrames(encodeStream(parts, (encoder) => encoder.finish(searchSettlement)));
  assert.equal(frames[0].event, undefined);
  assert.deepEqual((frames[0].data as ChunkFrame).choices[0].delta, { role: "assistant", content: "" });
  assert.equal(frames[1].event, "hi.tool_event");
});

test("every chunk of a server-tool stream keeps all its fields through the chunk schema behind /openapi.json", () => {
  for (const outcome of ["completed", "failed"] as const) {
    const frames = parseNamedFrames(
      encodeStream(searchRun(true, outcome), (encoder) => encoder.finish(searchSettlement)),
    );
    for (const { data } of frames) {
      if (data === "[DONE]") continue;
      // zod drops keys a schema does not list, so a field missing from the schema shows as a difference.
      assert.deepEqual(chatCompletionChunkSchema.parse(data), data);
    }
  }
});

test("every chunk of a server-tool stream validates against CreateChatCompletionStreamResponse of OpenAI's OpenAPI document", () => {
  const validator = loadOpenApiValidator();
  const frames = parseNamedFrames(
    encodeStream(searchRun(true), (encoder) => encoder.finish(searchSettlement)),
  );
  for (const { event, data } of frames) {
    if (data === "[DONE]") continue;
    assert.deepEqual(validator.validate("CreateChatCompletionStreamResponse", data), [], event);
  }
});

const imageSettlement: Settlement = {
  usage,
  costMicroUsd: 64_234,
  finishReason: "stop",
  serverToolCalls: { image: 2 },
};
const expectedImages = [
  { type: "image_url", image_url: { url: `data:image/png;base64,${GENERATED_BASE64}` } },
];

test("generated images go out once, the whole list in one delta.images chunk before the finish; events summarise them", () => {
  const frames = parseNamedFrames(
    encodeStream(imageToolRunParts(true), (encoder) => encoder.finish(imageSettlement)),
  );
  const deltas = frames
    .filter((frame) => frame.event === undefined && frame.data !== "[DONE]")
    .map((frame) => (frame.data as ChunkFrame).choices[0])
    .filter((choice) => choice !== undefined);
  assert.deepEqual(
    deltas.map((choice) => [choice.delta, choice.finish_reason]),
    [
      [{ role: "assistant", content: "" }, null],
      [{ content: BEFORE_TEXT }, null],
      [{ content: AFTER_TEXT }, null],
      [{ images: expectedImages }, null],
      [{}, "stop"],
    ],
  );
  const events = frames
    .filter((frame) => frame.event === "hi.tool_event")
    .map((frame) => (frame.data as ChunkFrame & { hi_tool_event: Record<string, unknown> }).hi_tool_event);
  assert.deepEqual(
    events.map((event) => [event.phase, event.call_id, event.output ?? event.error]),
    [
      ["started", "call_img1", undefined],
      ["started", "call_img2", undefined],
      ["completed", "call_img1", { media_type: "image/png", size: "40x30", bytes: GENERATED_PNG.length }],
      ["failed", "call_img2", imageResults(true)[1].error],
    ],
  );
  for (const { data } of frames) {
    if (data === "[DONE]") continue;
    assert.deepEqual(chatCompletionChunkSchema.parse(data), data, "the chunk schema lists every field");
  }
});

test("the SDK's stream helper ends with the images on the message (create and stream() alike)", async () => {
  const sse = encodeStream(imageToolRunParts(false), (encoder) => encoder.finish(imageSettlement));
  const stream = createClient(sse).chat.completions.stream(params);
  const completion = await stream.finalChatCompletion();
  const message = completion.choices[0].message as (typeof completion.choices)[0]["message"] & {
    images?: unknown;
  };
  assert.equal(message.content, BEFORE_TEXT + AFTER_TEXT);
  assert.deepEqual(message.images, expectedImages);
  assert.equal(completion.usage?.total_tokens, 165);
});

test("a stream that fails after an image was made still sends the image, before the billed usage and the error", () => {
  const parts = imageToolRunParts(false).filter((part) => part.type !== "finish");
  const frames = parseNamedFrames(
    encodeStream(parts, (encoder) =>
      encoder.fail(new GatewayError("provider_unavailable", "upstream gone"), imageSettlement),
    ),
  );
  const tail = frames.slice(-3).map(({ data }) => data as ChunkFrame);
  assert.deepEqual(tail[0].choices[0].delta, { images: expectedImages });
  assert.ok(tail[1].usage !== undefined && tail[1].choices.length === 0);
  assert.ok(tail[2].error !== undefined);
});

test("a run whose image generations all failed sends no images chunk", () => {
  const parts = imageToolRunParts(false).filter(
    (part) => !(part.type === "server-tool-result" && part.result.status === "completed"),
  );
  assert.ok(!encodeStream(parts, (encoder) => encoder.finish(imageSettlement)).includes("images"));
});

test("every chunk of an image stream validates against CreateChatCompletionStreamResponse of OpenAI's OpenAPI document", () => {
  const validator = loadOpenApiValidator();
  const frames = parseNamedFrames(
    encodeStream(imageToolRunParts(true), (encoder) => encoder.finish(imageSettlement)),
  );
  for (const { event, data } of frames) {
    if (data === "[DONE]") continue;
    assert.deepEqual(validator.validate("CreateChatCompletionStreamResponse", data), [], event);
  }
});
