import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { loadOpenApiValidator } from "../../../test/helpers/openapi-schema-validator.js";
import type {
  CanonicalStreamPart,
  CanonicalUsage,
  FinishReason,
  OpaqueReasoningState,
  ResultContent,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../ingress-format.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const context: ResponsesEncodeContext = {
  requestId: "req_7",
  model: "openai/gpt-5",
  createdAt: 1_700_000_000,
};

const usage: CanonicalUsage = {
  inputTokens: 200,
  outputTokens: 80,
  cachedInputTokens: 150,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 30,
};

function settle(finishReason: FinishReason): Settlement {
  return { usage, costMicroUsd: 2500, finishReason };
}

const state: OpaqueReasoningState = {
  providerKind: "anthropic",
  upstreamModel: "claude-opus-4-1",
  signature: "EqQB…",
};

const textTurn: CanonicalStreamPart[] = [
  { type: "response-metadata", upstreamId: "up_1", upstreamModel: "gpt-5-2025-08-07" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Hello" },
  { type: "text-delta", id: "t", delta: ", world" },
  { type: "text-end", id: "t" },
  { type: "usage", usage },
  { type: "finish", reason: "stop" },
];

/** Reasoning with provider state, then text, then two tool calls. */
const agentTurn: CanonicalStreamPart[] = [
  { type: "reasoning-start", id: "r" },
  { type: "reasoning-delta", id: "r", delta: "Need weather " },
  { type: "reasoning-delta", id: "r", delta: "and time." },
  { type: "reasoning-end", id: "r", providerState: state },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Checking both." },
  { type: "text-end", id: "t" },
  { type: "tool-input-start", id: "call_a", index: 0, name: "get_weather" },
  { type: "tool-input-delta", id: "call_a", delta: '{"city":' },
  { type: "tool-input-delta", id: "call_a", delta: '"Paris"}' },
  { type: "tool-input-end", id: "call_a" },
  { type: "tool-call", id: "call_a", index: 0, name: "get_weather", arguments: '{"city":"Paris"}' },
  { type: "tool-input-start", id: "call_b", index: 1, name: "get_time" },
  { type: "tool-input-delta", id: "call_b", delta: '{"tz": "Europe/Paris" }' },
  { type: "tool-input-end", id: "call_b" },
  { type: "tool-call", id: "call_b", index: 1, name: "get_time", arguments: '{"tz": "Europe/Paris" }' },
  { type: "usage", usage },
  { type: "finish", reason: "tool-calls" },
];

function encodeStream(
  parts: readonly CanonicalStreamPart[],
  end: (encoder: StreamEncoder) => string,
): string {
  const encoder = createResponsesStreamEncoder(context);
  let text = "";
  for (const part of parts) text += encoder.push(part);
  return text + end(encoder);
}

interface StreamEvent {
  type: string;
  sequence_number: number;
  [key: string]: unknown;
}

/** Parses `event:`/`data:` frames, checking the framing; comments are skipped. */
function parseEvents(sseText: string): StreamEvent[] {
  assert.ok(sseText.endsWith("\n\n"), "frames end with a blank line");
  const events: StreamEvent[] = [];
  for (const frame of sseText.split("\n\n")) {
    if (frame === "" || frame.startsWith(":")) continue;
    const [eventLine, dataLine, ...rest] = frame.split("\n");
    assert.deepEqual(rest, [], `one event and one data line: ${frame}`);
    assert.ok(eventLine.startsWith("event: ") && dataLine.startsWith("data: "), frame);
    const event = JSON.parse(dataLine.slice("data: ".length)) as StreamEvent;
    assert.equal(event.type, eventLine.slice("event: ".length), "event name equals data.type");
    events.push(event);
  }
  return events;
}

/** The canonical result the same parts fold to (blocks in order of first appearance). */
function foldParts(parts: readonly CanonicalStreamPart[]): ResultContent[] {
  const blocks = new Map<string, ResultContent>();
  for (const part of parts) {
    if (part.type === "text-delta") {
      const block = blocks.get(`text:${part.id}`) ?? { type: "text", text: "" };
      if (block.type === "text") block.text += part.delta;
      blocks.set(`text:${part.id}`, block);
    } else if (part.type === "reasoning-delta" || part.type === "reasoning-end") {
      const block = blocks.get(`reasoning:${part.id}`) ?? { type: "reasoning", text: "" };
      if (block.type === "reasoning" && part.type === "reasoning-delta") block.text += part.delta;
      if (block.type === "reasoning" && part.type === "reasoning-end" && part.providerState)
        block.providerState = part.providerState;
      blocks.set(`reasoning:${part.id}`, block);
    } else if (part.type === "tool-input-start" || part.type === "tool-call") {
      const key = `tool:${part.id}`;
      const args = part.type === "tool-call" ? part.arguments : "";
      if (!blocks.has(key) || part.type === "tool-call") {
        const providerState = part.type === "tool-call" ? part.providerState : undefined;
        blocks.set(key, {
          type: "tool-call",
          id: part.id,
          name: part.name,
          arguments: args,
          ...(providerState === undefined ? {} : { providerState }),
        });
      }
    }
  }
  return [...blocks.values()];
}

const geminiState: OpaqueReasoningState = {
  providerKind: "google",
  upstreamModel: "gemini-3-pro-preview",
  signature: "CiQB+/=sig",
};

/** Gemini sends each call whole, its thought signature on the call. */
const geminiTurn: CanonicalStreamPart[] = [
  { type: "reasoning-start", id: "r" },
  { type: "reasoning-delta", id: "r", delta: "Look it up." },
  { type: "reasoning-end", id: "r" },
  { type: "tool-input-start", id: "call_g1", index: 0, name: "get_weather" },
  { type: "tool-input-delta", id: "call_g1", delta: '{"city":"Paris"}' },
  { type: "tool-input-end", id: "call_g1" },
  {
    type: "tool-call",
    id: "call_g1",
    index: 0,
    name: "get_weather",
    arguments: '{"city":"Paris"}',
    providerState: geminiState,
  },
  {
    type: "tool-call",
    id: "call_g2",
    index: 1,
    name: "get_time",
    arguments: "{}",
    providerState: geminiState,
  },
  { type: "usage", usage },
  { type: "finish", reason: "tool-calls" },
];

/** An official SDK client whose every request is answered with `sseText`. */
function createClient(sseText: string): OpenAI {
  return new OpenAI({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    maxRetries: 0,
    fetch: async () => new Response(sseText, { headers: { "content-type": "text/event-stream" } }),
  });
}

const params = { model: "openai/gpt-5", input: "Hi" };

test("responses.stream() assembles a text answer; created and in_progress come first", async () => {
  const sse = encodeStream(textTurn, (encoder) => encoder.finish(settle("stop")));
  const response = await createClient(sse).responses.stream(params).finalResponse();
  assert.equal(response.id, "resp_req_7");
  assert.equal(response.status, "completed");
  assert.equal(response.output_text, "Hello, world");
  assert.equal(response.usage?.input_tokens_details.cached_tokens, 150);
  assert.equal(response.usage?.total_tokens, 280);

  const events = parseEvents(sse);
  assert.deepEqual(
    events.map((event) => event.type),
    [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ],
  );
  const created = events[0].response as { status: string; output: unknown[]; usage: unknown };
  assert.equal(created.status, "in_progress");
  assert.deepEqual(created.output, []);
  assert.equal(created.usage, null);
});

test("reasoning with state, text and two tool calls: items, arguments and usage through the SDK", async () => {
  const sse = encodeStream(agentTurn, (encoder) => encoder.finish(settle("tool-calls")));
  const stream = createClient(sse).responses.stream(params);
  const argumentDeltas: string[] = [];
  stream.on("response.function_call_arguments.delta", (event) => argumentDeltas.push(event.delta));
  const response = await stream.finalResponse();
  assert.equal(response.output_text, "Checking both.");
  assert.deepEqual(
    response.output.map((item) => [item.type, item.id]),
    [
      ["reasoning", "rs_req_7_0"],
      ["message", "msg_req_7_1"],
      ["function_call", "fc_req_7_2"],
      ["function_call", "fc_req_7_3"],
    ],
  );
  const [reasoning, , first, second] = response.output;
  assert.ok(reasoning.type === "reasoning");
  assert.deepEqual(reasoning.summary, [{ type: "summary_text", text: "Need weather and time." }]);
  assert.ok(reasoning.encrypted_content);
  assert.deepEqual(
    unwrapOpaqueState(reasoning.encrypted_content, "openai-responses", "encryptedContent"),
    state,
  );
  assert.ok(first.type === "function_call" && second.type === "function_call");
  assert.deepEqual(
    [first.call_id, first.name, first.arguments],
    ["call_a", "get_weather", '{"city":"Paris"}'],
  );
  assert.deepEqual([second.call_id, second.arguments], ["call_b", '{"tz": "Europe/Paris" }']);
  assert.deepEqual(argumentDeltas, ['{"city":', '"Paris"}', '{"tz": "Europe/Paris" }']);
  assert.deepEqual(response.usage, {
    input_tokens: 200,
    input_tokens_details: { cached_tokens: 150, cache_write_tokens: 0 },
    output_tokens: 80,
    output_tokens_details: { reasoning_tokens: 30 },
    total_tokens: 280,
    cost: 0.0025,
  });
});

test("create({stream: true}) yields gap-free sequence numbers, one response id and strictly sequential items", async () => {
  const sse = encodeStream(agentTurn, (encoder) => encoder.finish(settle("tool-calls")));
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await createClient(sse).responses.create({ ...params, stream: true })) {
    events.push(event);
  }
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const responseIds = events.flatMap((event) => ("response" in event ? [event.response.id] : []));
  assert.deepEqual(new Set(responseIds), new Set(["resp_req_7"]));

  const completed = events[events.length - 1];
  assert.ok(completed.type === "response.completed");
  const output = completed.response.output;
  let openIndex: number | undefined;
  for (const event of events) {
    if (event.type === "response.output_item.added") {
      assert.equal(openIndex, undefined, "the previous item was closed first");
      openIndex = event.output_index;
    } else if (event.type === "response.output_item.done") {
      assert.equal(event.output_index, openIndex);
      assert.deepEqual(event.item, output[event.output_index], "done item equals the final output item");
      openIndex = undefined;
    } else if ("item_id" in event) {
      assert.equal(event.output_index, openIndex, `${event.type} belongs to the open item`);
      assert.equal(event.item_id, output[event.output_index].id);
    }
  }
  assert.equal(openIndex, undefined);
  const added = events.filter((event) => event.type === "response.output_item.added");
  assert.deepEqual(
    added.map((event) => event.output_index),
    [0, 1, 2, 3],
  );
  const fcAdded = added[2];
  assert.ok(fcAdded.type === "response.output_item.added" && fcAdded.item.type === "function_call");
  assert.equal(fcAdded.item.arguments, "");
  const done = events.find((event) => event.type === "response.function_call_arguments.done");
  assert.ok(done?.type === "response.function_call_arguments.done");
  assert.equal(done.arguments, '{"city":"Paris"}');
});

test("response.completed.output equals the non-streaming output for the same parts", () => {
  const interleaved: CanonicalStreamPart[] = [
    { type: "reasoning-delta", id: "r1", delta: "plan" },
    { type: "tool-input-start", id: "a", index: 0, name: "f" },
    { type: "tool-input-delta", id: "a", delta: '{"x":' },
    { type: "text-delta", id: "t", delta: "early text" },
    { type: "reasoning-end", id: "r1", providerState: state },
    { type: "tool-input-start", id: "b", index: 1, name: "g" },
    { type: "tool-input-delta", id: "b", delta: "{}" },
    { type: "tool-input-delta", id: "a", delta: "1}" },
    { type: "tool-call", id: "b", index: 1, name: "g", arguments: "{}" },
    { type: "tool-call", id: "a", index: 0, name: "f", arguments: '{"x":1}' },
  ];
  const sequences: CanonicalStreamPart[][] = [
    textTurn,
    agentTurn,
    interleaved,
    [
      { type: "text-delta", id: "t1", delta: "A" },
      { type: "reasoning-start", id: "empty" },
      { type: "reasoning-end", id: "empty" },
      { type: "text-delta", id: "t2", delta: "B" },
      { type: "reasoning-end", id: "redacted", providerState: { ...state, redactedData: "x" } },
      { type: "tool-call", id: "whole", index: 0, name: "h", arguments: '{"y":2}' },
      { type: "text-delta", id: "t3", delta: "after" },
    ],
    geminiTurn,
    // The call completes while a reasoning item is open: buffered, replayed with its carrier.
    [
      { type: "reasoning-delta", id: "r", delta: "think" },
      { type: "tool-input-start", id: "g", index: 0, name: "f" },
      { type: "tool-input-delta", id: "g", delta: "{}" },
      { type: "tool-call", id: "g", index: 0, name: "f", arguments: "{}", providerState: geminiState },
      { type: "tool-call", id: "h", index: 1, name: "f", arguments: "{}", providerState: geminiState },
      { type: "reasoning-end", id: "r" },
      { type: "text-delta", id: "t", delta: "done" },
    ],
  ];
  for (const parts of sequences) {
    const events = parseEvents(encodeStream(parts, (encoder) => encoder.finish(settle("stop"))));
    const completed = events[events.length - 1];
    assert.equal(completed.type, "response.completed");
    const nonStreaming = encodeResponsesResult(
      { content: foldParts(parts), finishReason: "stop", usage },
      settle("stop"),
      context,
    );
    assert.deepEqual((completed.response as { output: unknown }).output, nonStreaming.output);
  }
});

test("parallel tool calls with interleaved deltas come out as two complete items, one after the other", async () => {
  const sse = encodeStream(
    [
      { type: "tool-input-start", id: "call_a", index: 0, name: "search" },
      { type: "tool-input-start", id: "call_b", index: 1, name: "search" },
      { type: "tool-input-delta", id: "call_a", delta: '{"q":"cir' },
      { type: "tool-input-delta", id: "call_b", delta: '{"q":"squ' },
      { type: "tool-input-delta", id: "call_a", delta: 'cle"}' },
      { type: "tool-input-delta", id: "call_b", delta: 'are"}' },
      { type: "tool-call", id: "call_a", index: 0, name: "search", arguments: '{"q":"circle"}' },
      { type: "tool-call", id: "call_b", index: 1, name: "search", arguments: '{"q":"square"}' },
    ],
    (encoder) => encoder.finish(settle("tool-calls")),
  );
  const response = await createClient(sse).responses.stream(params).finalResponse();
  assert.deepEqual(
    response.output.map((item) =>
      item.type === "function_call" ? [item.call_id, item.arguments] : item.type,
    ),
    [
      ["call_a", '{"q":"circle"}'],
      ["call_b", '{"q":"square"}'],
    ],
  );
  const deltas = parseEvents(sse).filter((event) => event.type === "response.function_call_arguments.delta");
  assert.deepEqual(
    deltas.map((event) => [event.output_index, event.delta]),
    [
      [0, '{"q":"cir'],
      [0, 'cle"}'],
      // Buffered while call_a was open, then replayed in one piece.
      [1, '{"q":"square"}'],
    ],
  );
});

test("a reasoning item that ends after a function call started is kept first and every item is closed", async () => {
  const sse = encodeStream(
    [
      { type: "reasoning-delta", id: "r", delta: "thinking" },
      { type: "tool-input-start", id: "c", index: 0, name: "f" },
      { type: "tool-input-delta", id: "c", delta: "{}" },
      { type: "reasoning-end", id: "r", providerState: state },
      { type: "tool-call", id: "c", index: 0, name: "f", arguments: "{}" },
    ],
    (encoder) => encoder.finish(settle("tool-calls")),
  );
  const response = await createClient(sse).responses.stream(params).finalResponse();
  assert.deepEqual(
    response.output.map((item) => item.type),
    ["reasoning", "function_call"],
  );
  const events = parseEvents(sse);
  const added = events.filter((event) => event.type === "response.output_item.added").length;
  const done = events.filter((event) => event.type === "response.output_item.done").length;
  assert.equal(added, 2);
  assert.equal(done, 2);
});

test("a call's state streams as a full carrier reasoning item after the function_call items", async () => {
  const sse = encodeStream(geminiTurn, (encoder) => encoder.finish(settle("tool-calls")));
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await createClient(sse).responses.create({ ...params, stream: true })) {
    events.push(event);
  }
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const itemEvents = events.flatMap((event) =>
    event.type === "response.output_item.added" || event.type === "response.output_item.done"
      ? [[event.type.slice("response.output_item.".length), event.output_index, event.item.type]]
      : [],
  );
  assert.deepEqual(itemEvents, [
    ["added", 0, "reasoning"],
    ["done", 0, "reasoning"],
    ["added", 1, "function_call"],
    ["done", 1, "function_call"],
    ["added", 2, "function_call"],
    ["done", 2, "function_call"],
    ["added", 3, "reasoning"],
    ["done", 3, "reasoning"],
    ["added", 4, "reasoning"],
    ["done", 4, "reasoning"],
  ]);
  const completed = events[events.length - 1];
  assert.ok(completed.type === "response.completed");
  const carrierStates = completed.response.output.flatMap((item) =>
    item.type === "reasoning" && item.encrypted_content
      ? [[item.summary, unwrapOpaqueState(item.encrypted_content, "openai-responses", "encryptedContent")]]
      : [],
  );
  assert.deepEqual(carrierStates, [
    [[], { ...geminiState, toolCallId: "call_g1" }],
    [[], { ...geminiState, toolCallId: "call_g2" }],
  ]);
  // The SDK's accumulator builds the same items (it adds parsed_arguments to function calls).
  const response = await createClient(sse).responses.stream(params).finalResponse();
  const project = (output: OpenAI.Responses.ResponseOutputItem[]) =>
    output.map((item) => [item.type, item.id, item.type === "reasoning" ? item.encrypted_content : null]);
  assert.deepEqual(project(response.output), project(completed.response.output));
});

test("a length finish ends with response.incomplete and reason max_output_tokens", async () => {
  const sse = encodeStream(
    [
      { type: "text-delta", id: "t", delta: "Once upon a" },
      { type: "finish", reason: "length" },
    ],
    (encoder) => encoder.finish(settle("length")),
  );
  const events = parseEvents(sse);
  const last = events[events.length - 1];
  assert.equal(last.type, "response.incomplete");
  const response = last.response as { status: string; incomplete_details: unknown; completed_at: unknown };
  assert.equal(response.status, "incomplete");
  assert.deepEqual(response.incomplete_details, { reason: "max_output_tokens" });
  assert.equal(response.completed_at, null);
  const final = await createClient(sse).responses.stream(params).finalResponse();
  assert.equal(final.status, "incomplete");
  assert.equal(final.output_text, "Once upon a");
});

test("streamed arguments completed by the final tool-call part, and calls sent whole, end up byte-exact", async () => {
  const sse = encodeStream(
    [
      { type: "tool-input-start", id: "c1", index: 0, name: "noop" },
      { type: "tool-input-end", id: "c1" },
      { type: "tool-call", id: "c1", index: 0, name: "noop", arguments: "{}" },
      { type: "tool-call", id: "c2", index: 1, name: "lookup", arguments: '{"q": "x"}' },
    ],
    (encoder) => encoder.finish(settle("tool-calls")),
  );
  const deltas = parseEvents(sse).filter((event) => event.type === "response.function_call_arguments.delta");
  assert.deepEqual(
    deltas.map((event) => event.delta),
    ["{}", '{"q": "x"}'],
    "delta consumers see the completion and the whole call too",
  );
  const response = await createClient(sse).responses.stream(params).finalResponse();
  assert.deepEqual(
    response.output.map((item) => (item.type === "function_call" ? item.arguments : "")),
    ["{}", '{"q": "x"}'],
  );
});

test("finish() closes items the upstream left open and works for an empty stream", async () => {
  const cut = encodeStream(
    [
      { type: "tool-input-start", id: "a", index: 0, name: "f" },
      { type: "tool-input-start", id: "b", index: 1, name: "g" },
      { type: "tool-input-delta", id: "b", delta: '{"k":1}' },
    ],
    (encoder) => encoder.finish(settle("tool-calls")),
  );
  const response = await createClient(cut).responses.stream(params).finalResponse();
  assert.deepEqual(
    response.output.map((item) => (item.type === "function_call" ? [item.name, item.arguments] : item.type)),
    [
      ["f", ""],
      ["g", '{"k":1}'],
    ],
  );
  const empty = encodeStream([], (encoder) => encoder.finish(settle("stop")));
  assert.deepEqual(
    parseEvents(empty).map((event) => event.type),
    ["response.created", "response.in_progress", "response.completed"],
  );
  const emptyResponse = await createClient(empty).responses.stream(params).finalResponse();
  assert.deepEqual(emptyResponse.output, []);
});

test("fail() sends an error event then response.failed, nothing after; the SDK throws APIError", async () => {
  const encoder = createResponsesStreamEncoder(context);
  let sse = encoder.push({ type: "text-delta", id: "t", delta: "partial" });
  sse += encoder.fail(new GatewayError("provider_overloaded", "The upstream is overloaded"));
  assert.equal(encoder.push({ type: "text-delta", id: "t", delta: "late" }), "");
  assert.equal(encoder.finish(settle("stop")), "");
  assert.equal(encoder.fail(new GatewayError("internal_error", "again")), "");
  assert.equal(encoder.keepAlive(), "");

  const events = parseEvents(sse);
  const [error, failed] = events.slice(-2);
  assert.deepEqual(error, {
    type: "error",
    code: "provider_overloaded",
    message: "The upstream is overloaded",
    param: null,
    error: {
      message: "The upstream is overloaded",
      type: "api_error",
      code: "provider_overloaded",
      param: null,
      request_id: "req_7",
      retry_after_seconds: 1,
    },
    sequence_number: events.length - 2,
  });
  assert.equal(failed.type, "response.failed");
  const response = failed.response as { id: string; status: string; error: unknown };
  assert.equal(response.id, "resp_req_7");
  assert.equal(response.status, "failed");
  assert.deepEqual(response.error, { code: "provider_overloaded", message: "The upstream is overloaded" });
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );

  await assert.rejects(createClient(sse).responses.stream(params).finalResponse(), (thrown: unknown) => {
    assert.ok(thrown instanceof OpenAI.APIError);
    assert.equal(thrown.code, "provider_overloaded");
    assert.match(thrown.message, /The upstream is overloaded/);
    return true;
  });
});

test("keepAlive() is an SSE comment the SDK ignores", async () => {
  const encoder = createResponsesStreamEncoder(context);
  assert.equal(encoder.keepAlive(), ": keep-alive\n\n");
  const sse =
    encoder.keepAlive() +
    encoder.push({ type: "text-delta", id: "t", delta: "ok" }) +
    encoder.keepAlive() +
    encoder.finish(settle("stop"));
  const response = await createClient(sse).responses.stream(params).finalResponse();
  assert.equal(response.output_text, "ok");
  assert.equal(encoder.keepAlive(), "", "nothing after the terminal event");
});

test("usage, metadata and lifecycle parts print nothing once the stream started", () => {
  const encoder = createResponsesStreamEncoder(context);
  assert.notEqual(encoder.push({ type: "response-metadata" }), "", "the first part opens the response");
  for (const part of [
    { type: "text-start", id: "t" },
    { type: "text-end", id: "t" },
    { type: "text-delta", id: "t", delta: "" },
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-end", id: "r" },
    { type: "tool-input-delta", id: "unknown", delta: "{}" },
    { type: "usage", usage },
    { type: "finish", reason: "stop" },
    { type: "error", error: { code: "provider_unavailable", message: "x" } },
  ] satisfies CanonicalStreamPart[]) {
    assert.equal(encoder.push(part), "", part.type);
  }
});

test("response.completed carries a response that validates against OpenAI's Response schema", () => {
  const validator = loadOpenApiValidator();
  for (const [parts, reason] of [
    [agentTurn, "tool-calls"],
    [geminiTurn, "tool-calls"],
    [textTurn, "length"],
  ] as const) {
    const events = parseEvents(encodeStream(parts, (encoder) => encoder.finish(settle(reason))));
    const terminal = events[events.length - 1];
    assert.deepEqual(validator.validate("Response", terminal.response), [], terminal.type);
  }
});
