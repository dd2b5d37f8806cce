import assert from "node:assert/strict";
import { test } from "node:test";
import {
  buildUsage,
  errorEvent,
  messageDeltaEvent,
  messageStartEvent,
  messageStopEvent,
  redactedThinkingBlockEvents,
  textBlockEvents,
  thinkingBlockEvents,
  toolUseBlockEvents,
} from "../../../test/helpers/fake-anthropic-upstream.js";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { SseEvent } from "../shared/sse-reader.js";
import type { AnthropicParseContext } from "./parse-response.js";
import { parseAnthropicStream } from "./parse-stream.js";

const context: AnthropicParseContext = { upstreamModel: "claude-sonnet-4-0" };

async function* toEvents(items: unknown[]): AsyncGenerator<SseEvent> {
  for (const item of items) {
    if (typeof item === "string") {
      yield { data: item };
      continue;
    }
    const type = (item as { type?: string }).type;
    yield { ...(type === undefined ? {} : { event: type }), data: JSON.stringify(item) };
  }
}

async function parse(items: unknown[], parseContext = context): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of parseAnthropicStream(toEvents(items), parseContext)) parts.push(part);
  return parts;
}

/** Parts produced before the parser threw, and what it threw. */
async function parseUntilThrow(items: unknown[]): Promise<{ parts: CanonicalStreamPart[]; error: unknown }> {
  const parts: CanonicalStreamPart[] = [];
  try {
    for await (const part of parseAnthropicStream(toEvents(items), context)) parts.push(part);
  } catch (error) {
    return { parts, error };
  }
  assert.fail("expected the parser to throw");
}

const emptyUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};

test("text stream: metadata, text lifecycle, usage, finish; ping and padding tolerated", async () => {
  const [start, ...rest] = textBlockEvents(0, ["Hel", "lo"]);
  const parts = await parse([
    messageStartEvent({ usage: buildUsage({ input_tokens: 12, output_tokens: 1 }) }),
    start,
    '{"type": "ping"}',
    `${JSON.stringify(rest[0]).slice(0, -1)}      }`,
    ...rest.slice(1),
    messageDeltaEvent({ usage: { output_tokens: 29 } }),
    messageStopEvent(),
  ]);
  assert.deepEqual(parts, [
    {
      type: "response-metadata",
      upstreamId: "msg_01FakeUpstream000000000001",
      upstreamModel: "claude-fake-4-5-20250101",
    },
    // message_start's count, with the first content: what a stream cut short is billed from.
    { type: "usage", usage: { ...emptyUsage, inputTokens: 12, outputTokens: 1 } },
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Hel" },
    { type: "text-delta", id: "text-0", delta: "lo" },
    { type: "text-end", id: "text-0" },
    { type: "usage", usage: { ...emptyUsage, inputTokens: 12, outputTokens: 29 } },
    { type: "finish", reason: "stop", rawReason: "end_turn" },
  ]);
});

test("thinking: deltas, signature collected and delivered on reasoning-end, then text", async () => {
  const parts = await parse([
    messageStartEvent(),
    ...thinkingBlockEvents(0, ["Two plus ", "two."], "EqQBCgIYAhIM+/sig=="),
    ...textBlockEvents(1, ["4"]),
    messageDeltaEvent(),
    messageStopEvent(),
  ]);
  assert.deepEqual(parts.slice(2, 9), [
    { type: "reasoning-start", id: "reasoning-0" },
    { type: "reasoning-delta", id: "reasoning-0", delta: "Two plus " },
    { type: "reasoning-delta", id: "reasoning-0", delta: "two." },
    {
      type: "reasoning-end",
      id: "reasoning-0",
      providerState: {
        providerKind: "anthropic",
        upstreamModel: "claude-sonnet-4-0",
        signature: "EqQBCgIYAhIM+/sig==",
      },
    },
    { type: "text-start", id: "text-1" },
    { type: "text-delta", id: "text-1", delta: "4" },
    { type: "text-end", id: "text-1" },
  ]);
});

test("signature-only thinking and redacted thinking still produce reasoning with state", async () => {
  const parts = await parse([
    messageStartEvent(),
    ...thinkingBlockEvents(0, [], "sig-only"),
    ...redactedThinkingBlockEvents(1, "EmwKAhgBEgy3va3pzix"),
    ...textBlockEvents(2, ["ok"]),
    messageDeltaEvent(),
    messageStopEvent(),
  ]);
  const reasoning = parts.filter((part) => part.type.startsWith("reasoning"));
  assert.deepEqual(reasoning, [
    { type: "reasoning-start", id: "reasoning-0" },
    {
      type: "reasoning-end",
      id: "reasoning-0",
      providerState: { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-0", signature: "sig-only" },
    },
    { type: "reasoning-start", id: "reasoning-1" },
    {
      type: "reasoning-end",
      id: "reasoning-1",
      providerState: {
        providerKind: "anthropic",
        upstreamModel: "claude-sonnet-4-0",
        redactedData: "EmwKAhgBEgy3va3pzix",
      },
    },
  ]);
});

test("parallel tool_use blocks: index by order, deltas byte-exact, no-arg tool becomes {}", async () => {
  const parts = await parse([
    messageStartEvent(),
    ...textBlockEvents(0, ["Let me check."]),
    ...toolUseBlockEvents(1, { id: "toolu_a", name: "weather", fragments: ['{"ci', 'ty": "Pa', 'ris"}'] }),
    ...toolUseBlockEvents(2, { id: "toolu_b", name: "clock", fragments: [""] }),
    ...toolUseBlockEvents(3, { id: "toolu_c", name: "weather", fragments: ['{"city":"Rome"}'] }),
    messageDeltaEvent({ stopReason: "tool_use" }),
    messageStopEvent(),
  ]);
  const tools = parts.filter((part) => part.type.startsWith("tool"));
  assert.deepEqual(tools, [
    { type: "tool-input-start", id: "toolu_a", index: 0, name: "weather" },
    { type: "tool-input-delta", id: "toolu_a", delta: '{"ci' },
    { type: "tool-input-delta", id: "toolu_a", delta: 'ty": "Pa' },
    { type: "tool-input-delta", id: "toolu_a", delta: 'ris"}' },
    { type: "tool-input-end", id: "toolu_a" },
    { type: "tool-call", id: "toolu_a", index: 0, name: "weather", arguments: '{"city": "Paris"}' },
    { type: "tool-input-start", id: "toolu_b", index: 1, name: "clock" },
    { type: "tool-input-delta", id: "toolu_b", delta: "{}" },
    { type: "tool-input-end", id: "toolu_b" },
    { type: "tool-call", id: "toolu_b", index: 1, name: "clock", arguments: "{}" },
    { type: "tool-input-start", id: "toolu_c", index: 2, name: "weather" },
    { type: "tool-input-delta", id: "toolu_c", delta: '{"city":"Rome"}' },
    { type: "tool-input-end", id: "toolu_c" },
    { type: "tool-call", id: "toolu_c", index: 2, name: "weather", arguments: '{"city":"Rome"}' },
  ]);
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "tool_use" });
  // The text block closed before the first tool opened.
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("text-end") < types.indexOf("tool-input-start"));
});

test("cumulative usage: two message_delta events, last value per field, start values fill gaps", async () => {
  const parts = await parse([
    messageStartEvent({
      usage: buildUsage({
        input_tokens: 3,
        cache_read_input_tokens: 1111,
        cache_creation_input_tokens: 418,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 418 },
        output_tokens: 1,
      }),
    }),
    ...textBlockEvents(0, ["a"]),
    messageDeltaEvent({ stopReason: null, usage: { output_tokens: 8 } }),
    messageDeltaEvent({ usage: { output_tokens: 15, input_tokens: 3, cache_read_input_tokens: 1111 } }),
    messageStopEvent(),
  ]);
  assert.deepEqual(parts.at(-2), {
    type: "usage",
    usage: {
      inputTokens: 1532,
      outputTokens: 15,
      cachedInputTokens: 1111,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 418,
      reasoningTokens: 0,
    },
  });
});

test("stop sequence, max_tokens, refusal without content, pause_turn", async () => {
  const run = (delta: Record<string, unknown>, content: unknown[] = textBlockEvents(0, ["x"])) =>
    parse([messageStartEvent(), ...content, delta, messageStopEvent()]);
  assert.deepEqual(
    (await run(messageDeltaEvent({ stopReason: "stop_sequence", stopSequence: "END" }))).at(-1),
    {
      type: "finish",
      reason: "stop-sequence",
      stopSequence: "END",
      rawReason: "stop_sequence",
    },
  );
  assert.deepEqual((await run(messageDeltaEvent({ stopReason: "max_tokens" }))).at(-1), {
    type: "finish",
    reason: "length",
    rawReason: "max_tokens",
  });
  const refusal = await run(messageDeltaEvent({ stopReason: "refusal" }), []);
  assert.deepEqual(
    refusal.map((part) => part.type),
    ["response-metadata", "usage", "finish"],
  );
  assert.deepEqual(refusal.at(-1), { type: "finish", reason: "refusal", rawReason: "refusal" });
  assert.deepEqual((await run(messageDeltaEvent({ stopReason: "pause_turn" }))).at(-1), {
    type: "finish",
    reason: "pause",
    rawReason: "pause_turn",
  });
});

test("an empty text block yields no text parts (no phantom block)", async () => {
  const parts = await parse([
    messageStartEvent(),
    ...textBlockEvents(0, []),
    ...toolUseBlockEvents(1, { id: "toolu_1", name: "f", fragments: ["{}"] }),
    messageDeltaEvent({ stopReason: "tool_use" }),
    messageStopEvent(),
  ]);
  assert.ok(!parts.some((part) => part.type.startsWith("text")));
  assert.equal(parts[2].type, "tool-input-start");
});

test("the structured-output tool streams as answer text with finish stop", async () => {
  const parts = await parse(
    [
      messageStartEvent(),
      ...toolUseBlockEvents(0, {
        id: "toolu_j",
        name: "json_response",
        fragments: ['{"city"', ': "Tokyo"}'],
      }),
      messageDeltaEvent({ stopReason: "tool_use" }),
      messageStopEvent(),
    ],
    { ...context, jsonToolName: "json_response" },
  );
  assert.deepEqual(parts.slice(2), [
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: '{"city"' },
    { type: "text-delta", id: "text-0", delta: ': "Tokyo"}' },
    { type: "text-end", id: "text-0" },
    { type: "usage", usage: { ...emptyUsage, inputTokens: 10, outputTokens: 5 } },
    { type: "finish", reason: "stop", rawReason: "tool_use" },
  ]);
});

test("server-tool blocks and their deltas are skipped; unknown events tolerated; nothing read after message_stop", async () => {
  const parts = await parse([
    messageStartEvent(),
    {
      type: "content_block_start",
      index: 0,
      content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
    },
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: '{"query":"x"}' },
    },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
    },
    { type: "content_block_stop", index: 1 },
    { type: "brand_new_event", whatever: true },
    ...textBlockEvents(2, ["Found it."]),
    { type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: {} } },
    messageDeltaEvent(),
    messageStopEvent(),
    errorEvent(),
  ]);
  assert.deepEqual(
    parts.map((part) => part.type),
    ["response-metadata", "usage", "text-start", "text-delta", "text-end", "usage", "finish"],
  );
});

test("event: error before content throws the classified error; after content the parser throws it too", async () => {
  const early = await parseUntilThrow([messageStartEvent(), errorEvent("overloaded_error", "Overloaded")]);
  assert.deepEqual(early.parts, []);
  assert.ok(early.error instanceof GatewayError);
  assert.equal(early.error.code, "provider_overloaded");

  const late = await parseUntilThrow([
    messageStartEvent(),
    ...textBlockEvents(0, ["partial"]).slice(0, 2),
    errorEvent("rate_limit_error", "Slow down"),
  ]);
  assert.deepEqual(
    late.parts.map((part) => part.type),
    ["response-metadata", "usage", "text-start", "text-delta"],
  );
  assert.ok(late.error instanceof GatewayError);
  assert.equal(late.error.code, "provider_rate_limit");
});

test("a stream that ends without message_stop, a malformed frame, or a second message_start throws", async () => {
  const truncated = await parseUntilThrow([messageStartEvent(), ...textBlockEvents(0, ["Hi"])]);
  assert.equal(truncated.parts.length, 5);
  assert.ok(truncated.error instanceof GatewayError);
  assert.equal(truncated.error.message, "upstream stream ended early");

  const malformed = await parseUntilThrow([messageStartEvent(), "{not json"]);
  assert.ok(malformed.error instanceof GatewayError && malformed.error.code === "provider_unavailable");

  const twice = await parseUntilThrow([messageStartEvent(), messageStartEvent()]);
  assert.ok(twice.error instanceof GatewayError && twice.error.code === "provider_unavailable");
});
