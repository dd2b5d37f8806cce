import assert from "node:assert/strict";
import { test } from "node:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { generateText } from "ai";
import type {
  CanonicalResult,
  FinishReason,
  OpaqueReasoningState,
  ServerToolErrorCode,
  ServerToolResult,
} from "../../canonical/index.js";
import { createEmptyUsage } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import { decodeMessagesRequest } from "./decode-request.js";
import { encodeMessagesResult } from "./encode-result.js";
import { MESSAGES_STOP_REASONS, mapStopReason } from "./map-stop-reason.js";
import { messagesResponseSchema } from "./response-schema.js";

const context: EncodeContext = {
  requestId: "req_7",
  model: "anthropic/claude-opus-4.1",
  createdAt: 1_750_000_000,
};

function settle(result: CanonicalResult): Settlement {
  return { usage: result.usage, costMicroUsd: 0, finishReason: result.finishReason };
}

/** Encodes and checks the result against the documented response schema. */
function encode(result: CanonicalResult) {
  const message = encodeMessagesResult(result, settle(result), context);
  assert.ok(
    messagesResponseSchema.safeParse(message).success,
    `documented shape: ${JSON.stringify(message)}`,
  );
  return message;
}

const signedState: OpaqueReasoningState = {
  providerKind: "anthropic",
  upstreamModel: "claude-opus-4-1-20250805",
  signature: "ErUBCkYIBRgCIkBvl2q==",
};

test("a text result becomes a message object; adjacent text parts are one block", () => {
  const result: CanonicalResult = {
    content: [
      { type: "text", text: "Hello" },
      { type: "text", text: " there" },
    ],
    finishReason: "stop",
    usage: { ...createEmptyUsage(), inputTokens: 10, outputTokens: 3 },
  };
  assert.deepEqual(encode(result), {
    id: "msg_req_7",
    type: "message",
    role: "assistant",
    model: "anthropic/claude-opus-4.1",
    content: [{ type: "text", text: "Hello there" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  });
});

test("usage: input_tokens excludes cache reads and both cache-write classes", () => {
  const result: CanonicalResult = {
    content: [{ type: "text", text: "ok" }],
    finishReason: "stop",
    // The numbers of Anthropic's prompt-cache recording: 3 uncached + 1111 read + 418 written.
    usage: {
      ...createEmptyUsage(),
      inputTokens: 1_532,
      outputTokens: 20,
      cachedInputTokens: 1_111,
      cacheWriteTokens: 400,
      cacheWrite1hTokens: 18,
    },
  };
  assert.deepEqual(encode(result).usage, {
    input_tokens: 3,
    output_tokens: 20,
    cache_read_input_tokens: 1_111,
    cache_creation_input_tokens: 418,
  });
});

test("reasoning, text and tool calls keep generation order; provider state rides in the signature and data", () => {
  const redacted: OpaqueReasoningState = {
    providerKind: "anthropic",
    upstreamModel: "claude-opus-4-1-20250805",
    redactedData: "R3D4CT3D",
  };
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "Need the weather.", providerState: signedState },
      { type: "reasoning", text: "", providerState: redacted },
      { type: "reasoning", text: "" },
      { type: "text", text: "Checking." },
      { type: "tool-call", id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris","days":[1,2]}' },
    ],
    finishReason: "tool-calls",
    usage: createEmptyUsage(),
  };
  const message = encode(result);
  assert.equal(message.stop_reason, "tool_use");
  assert.deepEqual(
    message.content.map((block) => block.type),
    ["thinking", "redacted_thinking", "text", "tool_use"],
    "a reasoning part with neither text nor state is not a block",
  );
  const [thinking, redactedBlock, , toolUse] = message.content;
  assert.ok(thinking.type === "thinking" && redactedBlock.type === "redacted_thinking");
  assert.equal(thinking.thinking, "Need the weather.");
  assert.deepEqual(unwrapOpaqueState(thinking.signature, "anthropic", "signature"), signedState);
  assert.deepEqual(unwrapOpaqueState(redactedBlock.data, "anthropic", "redactedData"), redacted);
  assert.deepEqual(toolUse, {
    type: "tool_use",
    id: "toolu_1",
    name: "get_weather",
    input: { city: "Paris", days: [1, 2] },
  });
});

test("the turn sent back decodes to the same reasoning state and byte-exact arguments", () => {
  const args = '{"city":"Paris","nested":{"a":[true,null,1.5]},"text":"caf\u00e9 \\"quoted\\""}';
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "", providerState: signedState },
      { type: "tool-call", id: "toolu_1", name: "get_weather", arguments: args },
    ],
    finishReason: "tool-calls",
    usage: createEmptyUsage(),
  };
  const message = encode(result);
  const replay = decodeMessagesRequest({
    model: "anthropic/claude-opus-4.1",
    max_tokens: 100,
    messages: [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: JSON.parse(JSON.stringify(message.content)) },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Sunny" }] },
    ],
  });
  assert.deepEqual(replay.messages[1], {
    role: "assistant",
    content: [
      { type: "reasoning", text: "", providerState: signedState },
      { type: "tool-call", id: "toolu_1", name: "get_weather", arguments: args },
    ],
  });
});

test('reasoning without provider state has signature "", which decodes back to plain reasoning', () => {
  const message = encode({
    content: [{ type: "reasoning", text: "Plain thoughts." }],
    finishReason: "stop",
    usage: createEmptyUsage(),
  });
  assert.deepEqual(message.content, [{ type: "thinking", thinking: "Plain thoughts.", signature: "" }]);
  const replay = decodeMessagesRequest({
    model: "a/b",
    max_tokens: 10,
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: message.content },
    ],
  });
  assert.deepEqual(replay.messages[1].content, [{ type: "reasoning", text: "Plain thoughts." }]);
});

test("tool arguments that are not a JSON object become input {}", () => {
  const message = encode({
    content: [
      { type: "tool-call", id: "a", name: "f", arguments: '{"cut": "off' },
      { type: "tool-call", id: "b", name: "g", arguments: "[1,2]" },
      { type: "tool-call", id: "c", name: "h", arguments: "" },
    ],
    finishReason: "length",
    usage: createEmptyUsage(),
  });
  assert.deepEqual(
    message.content.map((block) => (block.type === "tool_use" ? block.input : undefined)),
    [{}, {}, {}],
  );
  assert.equal(message.stop_reason, "max_tokens");
});

test("stop reasons: one table for every canonical finish reason; stop_sequence carries the matched string", () => {
  const expected: Record<FinishReason, string> = {
    stop: "end_turn",
    "stop-sequence": "stop_sequence",
    length: "max_tokens",
    "context-window": "model_context_window_exceeded",
    "tool-calls": "tool_use",
    refusal: "refusal",
    "content-filter": "refusal",
    pause: "pause_turn",
    error: "end_turn",
    other: "end_turn",
  };
  assert.deepEqual(MESSAGES_STOP_REASONS, expected);
  for (const [reason, stopReason] of Object.entries(expected)) {
    assert.equal(mapStopReason(reason as FinishReason), stopReason);
  }
  const base: CanonicalResult = { content: [], finishReason: "stop-sequence", usage: createEmptyUsage() };
  assert.equal(encode({ ...base, stopSequence: "END" }).stop_sequence, "END");
  assert.equal(encode({ ...base, finishReason: "stop", stopSequence: "END" }).stop_sequence, null);
});

test("the official SDK and the AI SDK's Anthropic provider read the response", async () => {
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "Hmm.", providerState: signedState },
      { type: "text", text: "Answer." },
      { type: "tool-call", id: "toolu_5", name: "lookup", arguments: '{"q":"x"}' },
    ],
    finishReason: "tool-calls",
    usage: { ...createEmptyUsage(), inputTokens: 50, outputTokens: 9, cachedInputTokens: 20 },
  };
  const body = JSON.stringify(encode(result));
  const fetch = async () => new Response(body, { headers: { "content-type": "application/json" } });

  const client = new Anthropic({ apiKey: "x", baseURL: "http://gateway.test/api", maxRetries: 0, fetch });
  const message = await client.messages.create({
    model: "anthropic/claude-opus-4.1",
    max_tokens: 100,
    messages: [{ role: "user", content: "Hi" }],
  });
  assert.equal(message.id, "msg_req_7");
  assert.equal(message.usage.input_tokens, 30);

  const provider = createAnthropic({ apiKey: "x", baseURL: "http://gateway.test/api/v1", fetch });
  const generated = await generateText({
    model: provider("anthropic/claude-opus-4.1"),
    prompt: "Hi",
    maxRetries: 0,
  });
  assert.equal(generated.text, "Answer.");
  assert.equal(generated.reasoningText, "Hmm.");
  assert.deepEqual(generated.toolCalls[0].input, { q: "x" });
  assert.equal(generated.finishReason, "tool-calls");
});

test('an AI SDK client sends stateless reasoning back with signature "", which decodes as plain reasoning', async () => {
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "Plain thoughts." },
      { type: "text", text: "Hi" },
    ],
    finishReason: "stop",
    usage: createEmptyUsage(),
  };
  const body = JSON.stringify(encode(result));
  const sentBodies: string[] = [];
  const provider = createAnthropic({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    fetch: async (_url, init) => {
      sentBodies.push(String(init?.body));
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  });
  const model = provider("anthropic/claude-opus-4.1");
  const first = await generateText({ model, prompt: "Hi", maxOutputTokens: 100, maxRetries: 0 });
  await generateText({
    model,
    messages: [
      { role: "user", content: "Hi" },
      ...first.response.messages,
      { role: "user", content: "More" },
    ],
    maxOutputTokens: 100,
    maxRetries: 0,
  });
  const replay = decodeMessagesRequest(JSON.parse(sentBodies[1]));
  assert.deepEqual(replay.messages[1], {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Plain thoughts." },
      { type: "text", text: "Hi" },
    ],
  });
});

test("a tool call's own provider state rides in a carrier thinking block after the calls and comes back onto the call", () => {
  const geminiState: OpaqueReasoningState = {
    providerKind: "google",
    upstreamModel: "gemini-3-pro",
    signature: "CiQB",
  };
  const message = encode({
    content: [
      {
        type: "tool-call",
        id: "call_a",
        name: "read_file",
        arguments: '{"path":"a"}',
        providerState: geminiState,
      },
      { type: "tool-call", id: "call_b", name: "read_file", arguments: '{"path":"b"}' },
    ],
    finishReason: "tool-calls",
    usage: createEmptyUsage(),
  });
  assert.deepEqual(
    message.content.map((block) => block.type),
    ["tool_use", "tool_use", "thinking"],
  );
  const carrier = message.content[2];
  assert.ok(carrier.type === "thinking");
  assert.equal(carrier.thinking, "");
  const replay = decodeMessagesRequest({
    model: "google/gemini-3-pro",
    max_tokens: 100,
    messages: [
      { role: "user", content: "Read a and b" },
      { role: "assistant", content: JSON.parse(JSON.stringify(message.content)) },
    ],
  });
  assert.deepEqual(replay.messages[1].content, [
    {
      type: "tool-call",
      id: "call_a",
      name: "read_file",
      arguments: '{"path":"a"}',
      providerState: geminiState,
    },
    { type: "tool-call", id: "call_b", name: "read_file", arguments: '{"path":"b"}' },
  ]);
});

const failedResult = (
  callId: string,
  tool: ServerToolResult["tool"],
  code: ServerToolErrorCode,
): ServerToolResult => ({
  callId,
  tool,
  input: {},
  status: "failed",
  error: { code, message: "It failed." },
  costMicroUsd: 0,
  durationMs: 10,
  events: true,
});

test("server tools: calls and results are blocks where they ran, datetime has none, cited text carries its citations", () => {
  const result: CanonicalResult = {
    content: [
      { type: "text", text: "Searching." },
      {
        type: "server-tool-call",
        call: { id: "s1", tool: "web_search", input: { query: "paris" }, events: true },
      },
      {
        type: "server-tool-result",
        result: {
          callId: "s1",
          tool: "web_search",
          input: { query: "paris" },
          status: "completed",
          output: {
            kind: "search",
            query: "paris",
            sources: [
              { url: "https://a.test/", title: "A", snippet: "Paris is big.", pageAge: null },
              { url: "https://b.test/", title: "B", snippet: "", pageAge: "2026-01-02" },
            ],
          },
          costMicroUsd: 5_000,
          durationMs: 90,
          events: true,
        },
      },
      { type: "server-tool-call", call: { id: "d1", tool: "datetime", input: {}, events: true } },
      {
        type: "server-tool-result",
        result: {
          callId: "d1",
          tool: "datetime",
          input: {},
          status: "completed",
          output: { kind: "datetime", utc: "2026-03-01T00:00:00Z", timezones: [] },
          costMicroUsd: 0,
          durationMs: 0,
          events: true,
        },
      },
      { type: "text", text: "It is " },
      {
        type: "text",
        text: "big.",
        citations: [
          { url: "https://a.test/", title: "A", startIndex: 0, endIndex: 4, citedText: "Paris is big." },
        ],
      },
    ],
    finishReason: "stop",
    usage: createEmptyUsage(),
  };
  const message = encodeMessagesResult(
    result,
    { ...settle(result), serverToolCalls: { web_search: 1, datetime: 1 } },
    context,
  );
  assert.ok(messagesResponseSchema.safeParse(message).success, JSON.stringify(message));
  const [first, call, found, lead, answer, ...rest] = message.content;
  assert.equal(rest.length, 0);
  assert.deepEqual(first, { type: "text", text: "Searching." });
  assert.deepEqual(call, {
    type: "server_tool_use",
    id: "srvtoolu_s1",
    name: "web_search",
    input: { query: "paris" },
  });
  assert.ok(found.type === "web_search_tool_result" && Array.isArray(found.content));
  assert.equal(found.tool_use_id, "srvtoolu_s1");
  assert.deepEqual(
    found.content.map(({ encrypted_content, ...fields }) => {
      assert.ok(encrypted_content !== "");
      return fields;
    }),
    [
      { type: "web_search_result", url: "https://a.test/", title: "A", page_age: null },
      { type: "web_search_result", url: "https://b.test/", title: "B", page_age: "2026-01-02" },
    ],
  );
  // Text after the datetime call starts a block; cited text is a block of its own, as Anthropic
  // writes them (a block's citations speak for all of its text).
  assert.deepEqual(lead, { type: "text", text: "It is " });
  assert.ok(answer.type === "text");
  assert.equal(answer.text, "big.");
  assert.deepEqual(
    answer.citations?.map(({ encrypted_index, ...fields }) => {
      assert.ok(encrypted_index !== "");
      return fields;
    }),
    [{ type: "web_search_result_location", url: "https://a.test/", title: "A", cited_text: "Paris is big." }],
  );
  assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
  assert.ok(!JSON.stringify(message).includes("hi.tool_event"), "no events outside streams");
});

test("server tools: a fetched page is a document block; failures carry Anthropic's error codes", () => {
  const result: CanonicalResult = {
    content: [
      {
        type: "server-tool-result",
        result: {
          callId: "f1",
          tool: "web_fetch",
          input: { url: "https://a.test/x" },
          status: "completed",
          output: {
            kind: "fetch",
            url: "https://a.test/x",
            finalUrl: "https://a.test/x/",
            title: "",
            retrievedAt: "2026-03-01T10:00:00.000Z",
            contentType: "text/plain",
            bytes: 5,
            text: "hello",
            truncated: false,
          },
          costMicroUsd: 0,
          durationMs: 5,
          events: false,
        },
      },
      { type: "server-tool-result", result: failedResult("f2", "web_fetch", "url_not_allowed") },
      { type: "server-tool-result", result: failedResult("f3", "web_fetch", "invalid_input") },
      { type: "server-tool-result", result: failedResult("f4", "web_fetch", "budget_exhausted") },
      { type: "server-tool-result", result: failedResult("s1", "web_search", "too_many_requests") },
      { type: "server-tool-result", result: failedResult("s2", "web_search", "max_uses_exceeded") },
      { type: "server-tool-result", result: failedResult("s3", "web_search", "invalid_input") },
      { type: "server-tool-result", result: failedResult("s4", "web_search", "budget_exhausted") },
      { type: "server-tool-result", result: failedResult("p1", "pdf", "unavailable") },
    ],
    finishReason: "stop",
    usage: createEmptyUsage(),
  };
  const message = encodeMessagesResult(
    result,
    { ...settle(result), serverToolCalls: { web_fetch: 4, web_search: 4 } },
    context,
  );
  assert.ok(messagesResponseSchema.safeParse(message).success, JSON.stringify(message));
  assert.deepEqual(message.content[0], {
    type: "web_fetch_tool_result",
    tool_use_id: "srvtoolu_f1",
    content: {
      type: "web_fetch_result",
      url: "https://a.test/x/",
      retrieved_at: "2026-03-01T10:00:00.000Z",
      content: {
        type: "document",
        title: null,
        source: { type: "text", media_type: "text/plain", data: "hello" },
      },
    },
  });
  assert.deepEqual(
    message.content.slice(1).map((block) => {
      assert.ok(block.type === "web_fetch_tool_result" || block.type === "web_search_tool_result");
      assert.ok(!Array.isArray(block.content));
      return [
        block.tool_use_id,
        block.content.type,
        "error_code" in block.content ? block.content.error_code : "",
      ];
    }),
    [
      ["srvtoolu_f2", "web_fetch_tool_result_error", "url_not_allowed"],
      ["srvtoolu_f3", "web_fetch_tool_result_error", "invalid_tool_input"],
      ["srvtoolu_f4", "web_fetch_tool_result_error", "unavailable"],
      ["srvtoolu_s1", "web_search_tool_result_error", "too_many_requests"],
      ["srvtoolu_s2", "web_search_tool_result_error", "max_uses_exceeded"],
      ["srvtoolu_s3", "web_search_tool_result_error", "invalid_tool_input"],
      ["srvtoolu_s4", "web_search_tool_result_error", "unavailable"],
    ],
    "a pdf result has no block",
  );
  assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 4, web_fetch_requests: 4 });
});

test("without server-tool counts usage has no server_tool_use", () => {
  const message = encode({
    content: [{ type: "text", text: "ok" }],
    finishReason: "stop",
    usage: createEmptyUsage(),
  });
  assert.ok(!("server_tool_use" in message.usage));
});
