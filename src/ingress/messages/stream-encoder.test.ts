import assert from "node:assert/strict";
import { test } from "node:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { streamText } from "ai";
import type {
  CanonicalStreamPart,
  CanonicalUsage,
  OpaqueReasoningState,
  ServerToolCall,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext, StreamEncoder } from "../ingress-format.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import { decodeMessagesRequest } from "./decode-request.js";
import { messagesStreamEventSchema } from "./response-schema.js";
import { createMessagesStreamEncoder, PING_FRAME } from "./stream-encoder.js";

const context: EncodeContext = {
  requestId: "req_42",
  model: "anthropic/claude-sonnet-4.5",
  createdAt: 1_700_000_000,
};

const usage: CanonicalUsage = {
  inputTokens: 1_200,
  outputTokens: 80,
  cachedInputTokens: 1_000,
  cacheWriteTokens: 50,
  cacheWrite1hTokens: 25,
  reasoningTokens: 30,
};

function settle(finishReason: Settlement["finishReason"]): Settlement {
  return { usage, costMicroUsd: 900, finishReason };
}

const signedState: OpaqueReasoningState = {
  providerKind: "anthropic",
  upstreamModel: "claude-sonnet-4-5-20250929",
  signature: "EqEECkYICxgCKkAo3UA4WwDbB8ihhpykVCsPx6iMzwNTNP8dePIgYjNpu2EWrt5JbApWWONEZaf5w46939Vu==",
};

function encodeStream(
  parts: CanonicalStreamPart[],
  end: (encoder: StreamEncoder) => string,
  encodeContext: EncodeContext = context,
): string {
  const encoder = createMessagesStreamEncoder(encodeContext);
  let text = "";
  for (const part of parts) text += encoder.push(part);
  return text + end(encoder);
}

function finishWith(reason: Settlement["finishReason"]) {
  return (encoder: StreamEncoder) => encoder.finish(settle(reason));
}

/** An official SDK client whose every request is answered with `sseText`. */
function createClient(sseText: string): Anthropic {
  return new Anthropic({
    apiKey: "x",
    baseURL: "http://gateway.test/api",
    maxRetries: 0,
    fetch: async () => new Response(sseText, { headers: { "content-type": "text/event-stream" } }),
  });
}

const params = {
  model: "anthropic/claude-sonnet-4.5",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content: "Hi" }],
};

async function readFinalMessage(sseText: string): Promise<Anthropic.Message> {
  return createClient(sseText).messages.stream(params).finalMessage();
}

interface Frame {
  event: string;
  data: Record<string, unknown> & { type: string; index?: number };
}

function parseFrames(sseText: string): Frame[] {
  assert.ok(sseText.endsWith("\n\n"), "frames end with a blank line");
  return sseText
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split("\n");
      assert.equal(rest.length, 0, `one event and one data line: ${frame}`);
      assert.ok(eventLine.startsWith("event: ") && dataLine.startsWith("data: "), frame);
      return { event: eventLine.slice("event: ".length), data: JSON.parse(dataLine.slice("data: ".length)) };
    });
}

/**
 * The wire rules of a Messages stream: event name = data.type; message_start once and first;
 * blocks opened in index order 0,1,2…, never two open at once, deltas only to the open block;
 * `hi.tool_event` frames only between blocks; message_delta then message_stop last. Returns the frames without pings.
 */
function assertWellFormed(sseText: string): Frame[] {
  const frames = parseFrames(sseText).filter((frame) => frame.event !== "ping");
  for (const frame of frames) {
    assert.equal(frame.event, frame.data.type);
    assert.ok(
      messagesStreamEventSchema.safeParse(frame.data).success,
      `documented shape: ${JSON.stringify(frame.data)}`,
    );
  }
  assert.equal(frames[0].event, "message_start");
  assert.equal(frames.filter((frame) => frame.event === "message_start").length, 1);
  assert.deepEqual(
    frames.slice(-2).map((frame) => frame.event),
    ["message_delta", "message_stop"],
  );
  let open: number | undefined;
  let nextIndex = 0;
  for (const frame of frames.slice(1, -2)) {
    if (frame.event === "content_block_start") {
      assert.equal(open, undefined, "a block opens only after the previous one closed");
      assert.equal(frame.data.index, nextIndex++);
      open = frame.data.index;
    } else if (frame.event === "content_block_delta") {
      assert.equal(frame.data.index, open, "deltas go to the open block");
    } else if (frame.event === "content_block_stop") {
      assert.equal(frame.data.index, open);
      open = undefined;
    } else if (frame.event === "hi.tool_event") {
      assert.equal(open, undefined, "a tool event never sits inside a block");
    } else {
      assert.fail(`unexpected ${frame.event} between message_start and message_delta`);
    }
  }
  assert.equal(open, undefined, "every block is closed before message_delta");
  return frames;
}

const textTurn: CanonicalStreamPart[] = [
  { type: "response-metadata", upstreamId: "up", upstreamModel: "claude-sonnet-4-5-20250929" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Hello" },
  { type: "text-delta", id: "t", delta: ", world." },
  { type: "text-end", id: "t" },
  { type: "usage", usage },
  { type: "finish", reason: "stop" },
];

test("a text turn: the SDK's MessageStream assembles the message with id, model, stop_reason and usage", async () => {
  const sse = encodeStream(textTurn, finishWith("stop"));
  assertWellFormed(sse);
  const message = await readFinalMessage(sse);
  assert.equal(message.id, "msg_req_42");
  assert.equal(message.model, "anthropic/claude-sonnet-4.5");
  assert.equal(message.role, "assistant");
  assert.deepEqual(message.content, [{ type: "text", text: "Hello, world." }]);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.stop_sequence, null);
  // Anthropic's input_tokens excludes cache reads and writes: 1200 - 1000 - 50 - 25.
  assert.deepEqual(message.usage, {
    input_tokens: 125,
    output_tokens: 80,
    cache_read_input_tokens: 1_000,
    cache_creation_input_tokens: 75,
  });
});

test("create({stream: true}) yields the events in wire order; message_start has the estimate of the prompt, message_delta the settled usage", async () => {
  const sse = encodeStream(
    textTurn,
    finishWith("stop"),
    Object.assign({ estimateInputTokens: () => 1_500 }, context),
  );
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for await (const event of await createClient(sse).messages.create({ ...params, stream: true }))
    events.push(event);
  assert.deepEqual(
    events.map((event) => event.type),
    [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ],
  );
  const start = events[0] as Anthropic.RawMessageStartEvent;
  assert.deepEqual(start.message.content, []);
  assert.equal(start.message.stop_reason, null);
  assert.equal(start.message.usage.input_tokens, 1_500);
  assert.equal(start.message.usage.output_tokens, 0);
  assert.deepEqual(events[1], {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  });
  const delta = events[5] as Anthropic.RawMessageDeltaEvent;
  assert.deepEqual(delta.delta, { stop_reason: "end_turn", stop_sequence: null });
  assert.equal(delta.usage.output_tokens, 80);
  // The correction: Anthropic's input_tokens excludes cache reads and writes (1200 - 1000 - 75).
  assert.equal(delta.usage.input_tokens, 125);
});

test("the prompt the upstream reported before any content is message_start's, cache split and all; output 0 (LangChain adds it to message_delta's)", async () => {
  const reported: CanonicalUsage = {
    inputTokens: 2_068,
    outputTokens: 1,
    cachedInputTokens: 2_000,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
  const parts: CanonicalStreamPart[] = [
    textTurn[0],
    { type: "usage", usage: reported },
    ...textTurn.slice(1),
  ];
  const sse = encodeStream(
    parts,
    finishWith("stop"),
    Object.assign({ estimateInputTokens: () => 1_500 }, context),
  );
  const frames = assertWellFormed(sse);
  assert.deepEqual((frames[0].data.message as { usage: unknown }).usage, {
    input_tokens: 68,
    output_tokens: 0,
    cache_read_input_tokens: 2_000,
    cache_creation_input_tokens: 0,
  });
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for await (const event of await createClient(sse).messages.create({ ...params, stream: true }))
    events.push(event);
  assert.equal((events[0] as Anthropic.RawMessageStartEvent).message.usage.input_tokens, 68);
  assert.equal((events.at(-2) as Anthropic.RawMessageDeltaEvent).usage.input_tokens, 125);
});

test("thinking with a signature, then text: the signature the SDK reports decodes back to the provider state", async () => {
  const sse = encodeStream(
    [
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "The user greets me." },
      { type: "reasoning-delta", id: "r", delta: "" },
      { type: "reasoning-end", id: "r", providerState: signedState },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hello!" },
      { type: "text-end", id: "t" },
      { type: "finish", reason: "stop" },
    ],
    finishWith("stop"),
  );
  const frames = assertWellFormed(sse);
  const thinkingDeltas = frames.filter(
    (frame) => frame.data.index === 0 && frame.event === "content_block_delta",
  );
  assert.deepEqual(
    thinkingDeltas.map((frame) => (frame.data.delta as { type: string }).type),
    ["thinking_delta", "signature_delta"],
    "one signature_delta, right before the block closes",
  );
  assert.deepEqual(frames[1].data.content_block, { type: "thinking", thinking: "", signature: "" });

  const message = await readFinalMessage(sse);
  assert.equal(message.content.length, 2);
  const [thinking, text] = message.content;
  assert.ok(thinking.type === "thinking");
  assert.equal(thinking.thinking, "The user greets me.");
  assert.deepEqual(unwrapOpaqueState(thinking.signature, "anthropic", "signature"), signedState);
  assert.deepEqual(text, { type: "text", text: "Hello!" });

  // The client sends the turn back as is: the canonical reasoning part carries the state again.
  const replay = decodeMessagesRequest({
    ...params,
    messages: [
      ...params.messages,
      { role: "assistant", content: message.content },
      { role: "user", content: "Go on" },
    ],
  });
  assert.deepEqual(replay.messages[1], {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user greets me.", providerState: signedState },
      { type: "text", text: "Hello!" },
    ],
  });
});

test("text then two interleaved tool calls: blocks stay sequential and the SDK parses both inputs", async () => {
  const sse = encodeStream(
    [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Checking both." },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "toolu_a", index: 0, name: "get_weather" },
      { type: "tool-input-start", id: "toolu_b", index: 1, name: "get_time" },
      { type: "tool-input-delta", id: "toolu_a", delta: '{"city":' },
      { type: "tool-input-delta", id: "toolu_b", delta: '{"tz": ' },
      { type: "tool-input-delta", id: "toolu_a", delta: '"Paris"}' },
      { type: "tool-input-delta", id: "toolu_b", delta: '"Europe/Paris"}' },
      { type: "tool-input-end", id: "toolu_a" },
      { type: "tool-input-end", id: "toolu_b" },
      { type: "tool-call", id: "toolu_a", index: 0, name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "tool-call", id: "toolu_b", index: 1, name: "get_time", arguments: '{"tz": "Europe/Paris"}' },
      { type: "usage", usage },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  const frames = assertWellFormed(sse);
  const starts = frames.filter((frame) => frame.event === "content_block_start").map((frame) => frame.data);
  assert.deepEqual(starts, [
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_a", name: "get_weather", input: {} },
    },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_b", name: "get_time", input: {} },
    },
  ]);
  const message = await readFinalMessage(sse);
  assert.equal(message.stop_reason, "tool_use");
  assert.deepEqual(message.content, [
    { type: "text", text: "Checking both." },
    { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
    { type: "tool_use", id: "toolu_b", name: "get_time", input: { tz: "Europe/Paris" } },
  ]);
});

test("a turn that is only a tool call: tool_use at index 0, no phantom text block, stop_reason tool_use", async () => {
  const sse = encodeStream(
    [
      { type: "text-start", id: "t" },
      { type: "text-end", id: "t" },
      { type: "tool-call", id: "toolu_z", index: 0, name: "lookup", arguments: '{"q":"x","n":2}' },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  const frames = assertWellFormed(sse);
  assert.deepEqual(
    frames.slice(1, -2).map((frame) => frame.data),
    [
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_z", name: "lookup", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"q":"x","n":2}' },
      },
      { type: "content_block_stop", index: 0 },
    ],
    "a never-streamed call is opened and sent in one input_json_delta",
  );
  const message = await readFinalMessage(sse);
  assert.deepEqual(message.content, [
    { type: "tool_use", id: "toolu_z", name: "lookup", input: { q: "x", n: 2 } },
  ]);
  assert.equal(message.stop_reason, "tool_use");
});

test("a no-argument call sends one empty input_json_delta; arguments that are not a JSON object read as {}", async () => {
  const sse = encodeStream(
    [
      { type: "tool-input-start", id: "toolu_1", index: 0, name: "get_user_country" },
      { type: "tool-input-end", id: "toolu_1" },
      { type: "tool-call", id: "toolu_1", index: 0, name: "get_user_country", arguments: "" },
      { type: "tool-call", id: "toolu_2", index: 1, name: "broken", arguments: "not json" },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  const frames = assertWellFormed(sse);
  const deltas = frames
    .filter((frame) => frame.event === "content_block_delta")
    .map((frame) => frame.data.delta);
  assert.deepEqual(deltas, [
    { type: "input_json_delta", partial_json: "" },
    { type: "input_json_delta", partial_json: "" },
  ]);
  const message = await readFinalMessage(sse);
  assert.deepEqual(
    message.content.map((block) => (block.type === "tool_use" ? block.input : block)),
    [{}, {}],
  );
});

test("max-tokens: the finish part's length becomes max_tokens; without a finish part the settlement decides", async () => {
  const truncated = encodeStream(
    [
      { type: "text-delta", id: "t", delta: "Once upon a" },
      { type: "finish", reason: "length" },
    ],
    finishWith("length"),
  );
  assertWellFormed(truncated);
  const message = await readFinalMessage(truncated);
  assert.equal(message.stop_reason, "max_tokens");
  assert.deepEqual(message.content, [{ type: "text", text: "Once upon a" }]);

  const noFinishPart = encodeStream(
    [{ type: "text-delta", id: "t", delta: "x" }],
    finishWith("context-window"),
  );
  assert.equal((await readFinalMessage(noFinishPart)).stop_reason, "model_context_window_exceeded");

  const empty = encodeStream([], finishWith("stop"));
  assertWellFormed(empty);
  const emptyMessage = await readFinalMessage(empty);
  assert.deepEqual(emptyMessage.content, []);
  assert.equal(emptyMessage.stop_reason, "end_turn");
});

test("a matched stop sequence is reported with its string", async () => {
  const sse = encodeStream(
    [
      { type: "text-delta", id: "t", delta: "1, 2, 3" },
      { type: "finish", reason: "stop-sequence", stopSequence: "4" },
    ],
    finishWith("stop-sequence"),
  );
  const message = await readFinalMessage(sse);
  assert.equal(message.stop_reason, "stop_sequence");
  assert.equal(message.stop_sequence, "4");
});

test("redacted thinking is one whole block without deltas; its data carries the state back", async () => {
  const redacted: OpaqueReasoningState = {
    providerKind: "anthropic",
    upstreamModel: "claude-sonnet-4-5-20250929",
    redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
  };
  const sse = encodeStream(
    [
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-end", id: "r", providerState: redacted },
      { type: "text-delta", id: "t", delta: "Done." },
      { type: "finish", reason: "stop" },
    ],
    finishWith("stop"),
  );
  const frames = assertWellFormed(sse);
  assert.equal(frames[1].event, "content_block_start");
  assert.equal(frames[2].event, "content_block_stop", "no deltas for redacted_thinking");
  const message = await readFinalMessage(sse);
  const block = message.content[0];
  assert.ok(block.type === "redacted_thinking");
  assert.deepEqual(unwrapOpaqueState(block.data, "anthropic", "redactedData"), redacted);
});

test("a signature-only thinking block (display omitted) keeps its empty text and its signature", async () => {
  const sse = encodeStream(
    [
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-end", id: "r", providerState: signedState },
      { type: "tool-call", id: "toolu_1", index: 0, name: "f", arguments: "{}" },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  assertWellFormed(sse);
  const message = await readFinalMessage(sse);
  const thinking = message.content[0];
  assert.ok(thinking.type === "thinking");
  assert.equal(thinking.thinking, "");
  assert.deepEqual(unwrapOpaqueState(thinking.signature, "anthropic", "signature"), signedState);
  assert.deepEqual(message.content[1], { type: "tool_use", id: "toolu_1", name: "f", input: {} });
});

test("text arriving before the thinking block's signature waits: blocks never overlap", async () => {
  const sse = encodeStream(
    [
      { type: "reasoning-delta", id: "r", delta: "Plan." },
      { type: "text-delta", id: "t", delta: "Answer" },
      { type: "reasoning-end", id: "r", providerState: signedState },
      { type: "text-delta", id: "t", delta: " here." },
      { type: "finish", reason: "stop" },
    ],
    finishWith("stop"),
  );
  assertWellFormed(sse);
  const message = await readFinalMessage(sse);
  assert.deepEqual(
    message.content.map((block) => block.type),
    ["thinking", "text"],
  );
  assert.deepEqual(message.content[1], { type: "text", text: "Answer here." });
});

test("a chunk with text and a tool call: the text block closes, the tool block opens with its name", async () => {
  const sse = encodeStream(
    [
      { type: "text-delta", id: "t", delta: "Let me check." },
      { type: "tool-input-start", id: "toolu_1", index: 0, name: "search" },
      { type: "tool-input-delta", id: "toolu_1", delta: '{"q":"a"}' },
      { type: "text-delta", id: "t", delta: " Late text." },
      { type: "tool-call", id: "toolu_1", index: 0, name: "search", arguments: '{"q":"a"}' },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  const frames = assertWellFormed(sse);
  // The tool's arguments streamed live, before its block ended: the text block had closed.
  const toolDelta = frames.findIndex(
    (frame) => frame.event === "content_block_delta" && frame.data.index === 1,
  );
  const toolCallClose = frames.findIndex(
    (frame) => frame.event === "content_block_stop" && frame.data.index === 1,
  );
  assert.ok(toolDelta > 0 && toolDelta < toolCallClose);
  const message = await readFinalMessage(sse);
  assert.deepEqual(message.content, [
    { type: "text", text: "Let me check." },
    { type: "tool_use", id: "toolu_1", name: "search", input: { q: "a" } },
    { type: "text", text: " Late text." },
  ]);
});

test("a tool call's provider state streams as a carrier block after the tool_use blocks and decodes back onto it", async () => {
  const geminiState: OpaqueReasoningState = {
    providerKind: "google",
    upstreamModel: "gemini-3-pro",
    signature: "CiQB",
  };
  const sse = encodeStream(
    [
      { type: "tool-input-start", id: "call_a", index: 0, name: "read_file" },
      { type: "tool-input-start", id: "call_b", index: 1, name: "read_file" },
      { type: "tool-input-delta", id: "call_a", delta: '{"path":"a"}' },
      { type: "tool-input-delta", id: "call_b", delta: '{"path":"b"}' },
      {
        type: "tool-call",
        id: "call_a",
        index: 0,
        name: "read_file",
        arguments: '{"path":"a"}',
        providerState: geminiState,
      },
      { type: "tool-call", id: "call_b", index: 1, name: "read_file", arguments: '{"path":"b"}' },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  assertWellFormed(sse);
  const message = await readFinalMessage(sse);
  assert.deepEqual(
    message.content.map((block) => block.type),
    ["tool_use", "tool_use", "thinking"],
  );
  const replay = decodeMessagesRequest({
    ...params,
    messages: [...params.messages, { role: "assistant", content: message.content }],
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

test("fail() sends the messages error envelope as an `error` event; the SDK throws APIError; nothing follows", async () => {
  const encoder = createMessagesStreamEncoder(context);
  let sse = encoder.push({ type: "text-delta", id: "t", delta: "partial" });
  sse += encoder.fail(new GatewayError("provider_overloaded", "The upstream provider is overloaded"));
  assert.equal(encoder.push({ type: "text-delta", id: "t", delta: "late" }), "");
  assert.equal(encoder.finish(settle("stop")), "");
  assert.equal(encoder.fail(new GatewayError("internal_error", "again")), "");
  assert.equal(encoder.keepAlive(), "");
  const frames = parseFrames(sse);
  assert.deepEqual(frames[frames.length - 1], {
    event: "error",
    data: {
      type: "error",
      error: {
        type: "overloaded_error",
        code: "provider_overloaded",
        message: "The upstream provider is overloaded",
        retry_after_seconds: 1,
      },
      request_id: "req_42",
    },
  });
  await assert.rejects(readFinalMessage(sse), (error: unknown) => {
    assert.ok(error instanceof Anthropic.APIError);
    assert.equal(error.type, "overloaded_error");
    assert.match(error.message, /overloaded/);
    return true;
  });
});

test("ping frames, even before message_start, are skipped by the SDK", async () => {
  const encoder = createMessagesStreamEncoder(context);
  assert.equal(encoder.keepAlive(), PING_FRAME);
  const sse =
    encoder.keepAlive() +
    encoder.push({ type: "text-delta", id: "t", delta: "ok" }) +
    encoder.keepAlive() +
    encoder.finish(settle("stop"));
  const message = await readFinalMessage(sse);
  assert.deepEqual(message.content, [{ type: "text", text: "ok" }]);
});

test("nothing follows message_stop", () => {
  const encoder = createMessagesStreamEncoder(context);
  encoder.push({ type: "text-delta", id: "t", delta: "x" });
  assert.ok(
    encoder.finish(settle("stop")).endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'),
  );
  assert.equal(encoder.finish(settle("stop")), "");
  assert.equal(encoder.fail(new GatewayError("internal_error", "late")), "");
  assert.equal(encoder.keepAlive(), "");
  assert.equal(encoder.push({ type: "text-delta", id: "t", delta: "y" }), "");
});

test("the AI SDK's Anthropic provider, which validates every event, reads text, reasoning and a tool call", async () => {
  const sse = encodeStream(
    [
      { type: "reasoning-delta", id: "r", delta: "Think." },
      { type: "reasoning-end", id: "r", providerState: signedState },
      { type: "text-delta", id: "t", delta: "Calling." },
      { type: "tool-call", id: "toolu_9", index: 0, name: "lookup", arguments: '{"q":"x"}' },
      { type: "finish", reason: "tool-calls" },
    ],
    finishWith("tool-calls"),
  );
  const provider = createAnthropic({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    // A keep-alive before message_start, as the gateway sends while waiting for the upstream.
    fetch: async () => new Response(PING_FRAME + sse, { headers: { "content-type": "text/event-stream" } }),
  });
  const result = streamText({ model: provider("anthropic/claude-sonnet-4.5"), prompt: "Hi", maxRetries: 0 });
  assert.equal(await result.text, "Calling.");
  assert.equal(await result.reasoningText, "Think.");
  const [call] = await result.toolCalls;
  assert.deepEqual([call.toolCallId, call.toolName, call.input], ["toolu_9", "lookup", { q: "x" }]);
  assert.equal(await result.finishReason, "tool-calls");
  assert.equal((await result.usage).outputTokens, 80);
});

const searchCall: ServerToolCall = {
  id: "call_1",
  tool: "web_search",
  input: { query: "capital of france" },
  events: false,
};

const searchResult: ServerToolResult = {
  callId: "call_1",
  tool: "web_search",
  input: { query: "capital of france" },
  status: "completed",
  output: {
    kind: "search",
    query: "capital of france",
    sources: [
      {
        url: "https://example.com/fr",
        title: "France",
        snippet: "Paris is the capital.",
        pageAge: "2 days ago",
      },
    ],
  },
  costMicroUsd: 5_000,
  durationMs: 120,
  events: false,
};

const citation: UrlCitation = {
  url: "https://example.com/fr",
  title: "France",
  startIndex: 0,
  endIndex: 5,
  citedText: "Paris is the capital.",
};

/** Round 1 searches after a sentence, round 2 answers citing the result. */
function searchRun(events: boolean): CanonicalStreamPart[] {
  return [
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Let me look." },
    { type: "text-end", id: "t1" },
    { type: "server-tool-call", call: { ...searchCall, events } },
    { type: "server-tool-result", result: { ...searchResult, events } },
    { type: "text-start", id: "t2" },
    { type: "text-delta", id: "t2", delta: "Paris" },
    { type: "citation", id: "t2", citation },
    { type: "text-delta", id: "t2", delta: " it is." },
    { type: "text-end", id: "t2" },
    { type: "usage", usage },
    { type: "finish", reason: "stop" },
  ];
}

function settleWithCalls(): Settlement {
  return { ...settle("stop"), serverToolCalls: { web_search: 1 } };
}

/** The frames' data with every opaque `encrypted_*` value checked non-empty and replaced by `<opaque>`. */
function readable(frames: Frame[]): unknown[] {
  return JSON.parse(JSON.stringify(frames.map((frame) => frame.data)), (key, value) => {
    if (key !== "encrypted_content" && key !== "encrypted_index") return value;
    assert.ok(typeof value === "string" && value !== "", `${key} is a non-empty string`);
    return "<opaque>";
  });
}

test("a web_search round: server_tool_use with its input in one delta, the result block whole, a citations_delta in the answer's block; indexes run on", async () => {
  const sse = encodeStream(searchRun(false), (encoder) => encoder.finish(settleWithCalls()));
  const frames = assertWellFormed(sse);
  assert.deepEqual(readable(frames.slice(1, -2)), [
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me look." } },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "server_tool_use", id: "srvtoolu_call_1", name: "web_search", input: {} },
    },
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"query":"capital of france"}' },
    },
    { type: "content_block_stop", index: 1 },
    {
      type: "content_block_start",
      index: 2,
      content_block: {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_call_1",
        content: [
          {
            type: "web_search_result",
            url: "https://example.com/fr",
            title: "France",
            encrypted_content: "<opaque>",
            page_age: "2 days ago",
          },
        ],
      },
    },
    { type: "content_block_stop", index: 2 },
    { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "Paris" } },
    {
      type: "content_block_delta",
      index: 3,
      delta: {
        type: "citations_delta",
        citation: {
          type: "web_search_result_location",
          url: "https://example.com/fr",
          title: "France",
          cited_text: "Paris is the capital.",
          encrypted_index: "<opaque>",
        },
      },
    },
    { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: " it is." } },
    { type: "content_block_stop", index: 3 },
  ]);
  const deltaUsage = frames[frames.length - 2].data.usage as Record<string, unknown>;
  assert.deepEqual(deltaUsage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });

  const message = await readFinalMessage(sse);
  assert.deepEqual(
    message.content.map((block) => block.type),
    ["text", "server_tool_use", "web_search_tool_result", "text"],
  );
  const answer = message.content[3];
  assert.ok(answer.type === "text");
  assert.equal(answer.text, "Paris it is.");
  assert.equal(answer.citations?.length, 1);
  assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
});

test("without server-tool counts in the settlement, message_delta has no server_tool_use", () => {
  const frames = assertWellFormed(encodeStream(textTurn, finishWith("stop")));
  assert.ok(!("server_tool_use" in (frames[frames.length - 2].data.usage as object)));
});

test("hi.tool_event frames follow their blocks when the call asked for them, and never appear otherwise", () => {
  const quiet = assertWellFormed(
    encodeStream(searchRun(false), (encoder) => encoder.finish(settleWithCalls())),
  );
  assert.equal(quiet.filter((frame) => frame.event === "hi.tool_event").length, 0);

  const sse = encodeStream(searchRun(true), (encoder) => encoder.finish(settleWithCalls()));
  const frames = assertWellFormed(sse);
  const sequence = frames.map((frame) =>
    frame.event === "hi.tool_event"
      ? `event:${frame.data.phase}`
      : `${frame.event}:${frame.data.index ?? ""}`,
  );
  assert.deepEqual(sequence.slice(4, 11), [
    "content_block_start:1",
    "content_block_delta:1",
    "content_block_stop:1",
    "event:started",
    "content_block_start:2",
    "content_block_stop:2",
    "event:completed",
  ]);
  assert.ok(sse.includes('event: hi.tool_event\ndata: {"type":"hi.tool_event","tool":"web_search"'));
  const [started, ended] = frames
    .filter((frame) => frame.event === "hi.tool_event")
    .map((frame) => frame.data);
  assert.deepEqual(started, {
    type: "hi.tool_event",
    tool: "web_search",
    phase: "started",
    call_id: "srvtoolu_call_1",
    input: { query: "capital of france" },
  });
  assert.deepEqual(ended, {
    type: "hi.tool_event",
    tool: "web_search",
    phase: "completed",
    call_id: "srvtoolu_call_1",
    input: { query: "capital of france" },
    output: { result_count: 1, urls: ["https://example.com/fr"] },
    cost_micro_usd: 5_000,
    duration_ms: 120,
  });
});

test("a datetime call has no block; with events its frames carry the bare call id", () => {
  const call: ServerToolCall = {
    id: "call_dt",
    tool: "datetime",
    input: { timezone: "Europe/Paris" },
    events: true,
  };
  const result: ServerToolResult = {
    callId: "call_dt",
    tool: "datetime",
    input: call.input,
    status: "completed",
    output: { kind: "datetime", utc: "2026-03-01T12:00:00Z", timezones: ["Europe/Paris"] },
    costMicroUsd: 0,
    durationMs: 1,
    events: true,
  };
  const parts: CanonicalStreamPart[] = [
    { type: "text-delta", id: "t1", delta: "One moment." },
    { type: "text-end", id: "t1" },
    { type: "server-tool-call", call },
    { type: "server-tool-result", result },
    { type: "text-delta", id: "t2", delta: "It is noon." },
    { type: "text-end", id: "t2" },
    { type: "finish", reason: "stop" },
  ];
  const frames = assertWellFormed(encodeStream(parts, finishWith("stop")));
  assert.deepEqual(
    frames.slice(1, -2).map((frame) => (frame.event === "hi.tool_event" ? frame.data : frame.event)),
    [
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      { type: "hi.tool_event", tool: "datetime", phase: "started", call_id: "call_dt", input: call.input },
      {
        type: "hi.tool_event",
        tool: "datetime",
        phase: "completed",
        call_id: "call_dt",
        input: call.input,
        output: { utc: "2026-03-01T12:00:00Z", timezones: ["Europe/Paris"] },
        cost_micro_usd: 0,
        duration_ms: 1,
      },
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
    ],
    "the two rounds' texts stay two blocks",
  );
  const quiet = encodeStream(
    parts.map((part) =>
      part.type === "server-tool-call"
        ? { ...part, call: { ...call, events: false } }
        : part.type === "server-tool-result"
          ? { ...part, result: { ...result, events: false } }
          : part,
    ),
    finishWith("stop"),
  );
  assert.ok(!quiet.includes("hi.tool_event"));
});

test("a web_fetch call and a failed fetch: the result block carries the document, the failure its error code", async () => {
  const fetchCall: ServerToolCall = {
    id: "f1",
    tool: "web_fetch",
    input: { url: "https://example.com/a" },
    events: false,
  };
  const failedCall: ServerToolCall = {
    id: "f2",
    tool: "web_fetch",
    input: { url: "https://gone.test/" },
    events: true,
  };
  const fetched: ServerToolResult = {
    callId: "f1",
    tool: "web_fetch",
    input: fetchCall.input,
    status: "completed",
    output: {
      kind: "fetch",
      url: "https://example.com/a",
      finalUrl: "https://example.com/a/",
      title: "Page A",
      retrievedAt: "2026-03-01T12:00:00.000Z",
      contentType: "text/html",
      bytes: 2_048,
      text: "# Page A\n\nBody.",
      truncated: false,
    },
    costMicroUsd: 0,
    durationMs: 80,
    events: false,
  };
  const failed: ServerToolResult = {
    callId: "f2",
    tool: "web_fetch",
    input: failedCall.input,
    status: "failed",
    error: { code: "url_not_accessible", message: "The page could not be read." },
    costMicroUsd: 0,
    durationMs: 30,
    events: true,
  };
  const sse = encodeStream(
    [
      { type: "server-tool-call", call: fetchCall },
      { type: "server-tool-call", call: failedCall },
      { type: "server-tool-result", result: fetched },
      { type: "server-tool-result", result: failed },
      { type: "text-delta", id: "t", delta: "Read one." },
      { type: "finish", reason: "stop" },
    ],
    (encoder) => encoder.finish({ ...settle("stop"), serverToolCalls: { web_fetch: 2 } }),
  );
  const frames = assertWellFormed(sse);
  const results = frames
    .filter((frame) => frame.event === "content_block_start")
    .map((frame) => frame.data.content_block as { type: string })
    .filter((block) => block.type === "web_fetch_tool_result");
  assert.deepEqual(results, [
    {
      type: "web_fetch_tool_result",
      tool_use_id: "srvtoolu_f1",
      content: {
        type: "web_fetch_result",
        url: "https://example.com/a/",
        retrieved_at: "2026-03-01T12:00:00.000Z",
        content: {
          type: "document",
          title: "Page A",
          source: { type: "text", media_type: "text/plain", data: "# Page A\n\nBody." },
        },
      },
    },
    {
      type: "web_fetch_tool_result",
      tool_use_id: "srvtoolu_f2",
      content: { type: "web_fetch_tool_result_error", error_code: "url_not_accessible" },
    },
  ]);
  const failedEvent = frames.find(
    (frame) => frame.event === "hi.tool_event" && frame.data.phase === "failed",
  );
  assert.deepEqual(failedEvent?.data.error, {
    code: "url_not_accessible",
    message: "The page could not be read.",
  });
  const message = await readFinalMessage(sse);
  assert.deepEqual(
    message.content.map((block) => (block.type === "server_tool_use" ? block.input : block.type)),
    [
      { url: "https://example.com/a" },
      { url: "https://gone.test/" },
      "web_fetch_tool_result",
      "web_fetch_tool_result",
      "text",
    ],
  );
  assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
});

test("a server-tool call while a thinking block still waits for its signature: the call and its event wait too", () => {
  const frames = assertWellFormed(
    encodeStream(
      [
        { type: "text-delta", id: "t", delta: "Searching." },
        { type: "reasoning-delta", id: "r", delta: "Need data." },
        { type: "server-tool-call", call: { ...searchCall, events: true } },
        { type: "reasoning-end", id: "r", providerState: signedState },
        { type: "server-tool-result", result: searchResult },
        { type: "finish", reason: "stop" },
      ],
      finishWith("stop"),
    ),
  );
  assert.deepEqual(
    frames.slice(1, -2).map((frame) => `${frame.event}:${frame.data.index ?? frame.data.phase}`),
    [
      "content_block_start:0",
      "content_block_delta:0",
      "content_block_stop:0",
      "content_block_start:1",
      "content_block_delta:1",
      "content_block_delta:1",
      "content_block_stop:1",
      "content_block_start:2",
      "content_block_delta:2",
      "content_block_stop:2",
      "hi.tool_event:started",
      "content_block_start:3",
      "content_block_stop:3",
    ],
  );
});

test("a citation for a text block still waiting behind another block goes out with that block's text", () => {
  const frames = assertWellFormed(
    encodeStream(
      [
        { type: "reasoning-delta", id: "r", delta: "Hmm." },
        { type: "text-delta", id: "t", delta: "Paris." },
        { type: "citation", id: "t", citation },
        { type: "reasoning-end", id: "r", providerState: signedState },
        { type: "text-end", id: "t" },
        { type: "citation", id: "unknown", citation },
        { type: "finish", reason: "stop" },
      ],
      finishWith("stop"),
    ),
  );
  const textFrames = frames.filter((frame) => frame.data.index === 1).map((frame) => frame.event);
  assert.deepEqual(textFrames, [
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
  ]);
  assert.equal(frames.filter((frame) => JSON.stringify(frame.data).includes("citations_delta")).length, 1);
});

test("the AI SDK's Anthropic provider reads a server-tool stream without events: the search's sources and the cited text", async () => {
  const sse = encodeStream(searchRun(false), (encoder) => encoder.finish(settleWithCalls()));
  const provider = createAnthropic({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    fetch: async () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
  });
  const result = streamText({ model: provider("anthropic/claude-sonnet-4.5"), prompt: "Hi", maxRetries: 0 });
  assert.equal(await result.text, "Let me look.Paris it is.");
  const sources = await result.sources;
  assert.ok(sources.length >= 1);
  assert.ok(
    sources.every((source) => source.sourceType === "url" && source.url === "https://example.com/fr"),
  );
  assert.equal(await result.finishReason, "stop");
});

test("a stream that fails after a search reports the search in the error event's usage", () => {
  const encoder = createMessagesStreamEncoder(context);
  encoder.push({ type: "server-tool-call", call: searchCall });
  const frames = parseFrames(
    encoder.fail(new GatewayError("provider_overloaded", "overloaded"), settleWithCalls()),
  );
  const usageOnError = frames[0].data.usage as Record<string, unknown>;
  assert.deepEqual(usageOnError.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
});
