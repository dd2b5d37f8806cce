import assert from "node:assert/strict";
import { test } from "node:test";
import { buildMessage, buildUsage } from "../../../test/helpers/fake-anthropic-upstream.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { parseAnthropicResponse } from "./parse-response.js";

const context = { upstreamModel: "claude-sonnet-4-0" };

test("thinking, redacted thinking, text and tool_use in order, state stamped with the requested model", () => {
  const result = parseAnthropicResponse(
    buildMessage({
      model: "claude-sonnet-4-20250514",
      content: [
        { type: "thinking", thinking: "Let me look.", signature: "EqEECkYICxgC+/=" },
        { type: "redacted_thinking", data: "EmwKAhgB" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris", days: [1, 2] } },
        { type: "tool_use", id: "toolu_02", name: "get_time", input: {} },
      ],
      usage: buildUsage({ input_tokens: 398, output_tokens: 155 }),
    }),
    context,
  );
  assert.deepEqual(result, {
    upstreamId: "msg_01FakeUpstream000000000001",
    upstreamModel: "claude-sonnet-4-20250514",
    content: [
      {
        type: "reasoning",
        text: "Let me look.",
        providerState: {
          providerKind: "anthropic",
          upstreamModel: "claude-sonnet-4-0",
          signature: "EqEECkYICxgC+/=",
        },
      },
      {
        type: "reasoning",
        text: "",
        providerState: {
          providerKind: "anthropic",
          upstreamModel: "claude-sonnet-4-0",
          redactedData: "EmwKAhgB",
        },
      },
      { type: "text", text: "Checking." },
      { type: "tool-call", id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris","days":[1,2]}' },
      { type: "tool-call", id: "toolu_02", name: "get_time", arguments: "{}" },
    ],
    finishReason: "tool-calls",
    rawFinishReason: "tool_use",
    usage: {
      inputTokens: 398,
      outputTokens: 155,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 0,
    },
  });
});

test("stop reasons: stop sequence carries the matched string; max_tokens, refusal, pause_turn, unknown", () => {
  const stopped = parseAnthropicResponse(
    buildMessage({ stopReason: "stop_sequence", stopSequence: "END" }),
    context,
  );
  assert.equal(stopped.finishReason, "stop-sequence");
  assert.equal(stopped.stopSequence, "END");
  const cases: Array<[string | null, string]> = [
    ["max_tokens", "length"],
    ["refusal", "refusal"],
    ["pause_turn", "pause"],
    ["model_context_window_exceeded", "context-window"],
    ["brand_new_reason", "other"],
    [null, "other"],
  ];
  for (const [raw, expected] of cases) {
    const result = parseAnthropicResponse(buildMessage({ stopReason: raw }), context);
    assert.equal(result.finishReason, expected);
    assert.equal(result.rawFinishReason, raw ?? undefined);
    assert.equal(result.stopSequence, undefined);
  }
});

test("a refusal with no content at all", () => {
  const result = parseAnthropicResponse(buildMessage({ content: [], stopReason: "refusal" }), context);
  assert.deepEqual(result.content, []);
  assert.equal(result.finishReason, "refusal");
});

test("the structured-output tool's input is the answer text, finish stop", () => {
  const result = parseAnthropicResponse(
    buildMessage({
      content: [
        { type: "tool_use", id: "toolu_j", name: "json_response", input: { city: "Tokyo", population: 37 } },
      ],
    }),
    { ...context, jsonToolName: "json_response" },
  );
  assert.deepEqual(result.content, [{ type: "text", text: '{"city":"Tokyo","population":37}' }]);
  assert.equal(result.finishReason, "stop");
  assert.equal(result.rawFinishReason, "tool_use");
  // A real tool call next to it keeps the turn a tool-call turn.
  const mixed = parseAnthropicResponse(
    buildMessage({
      content: [
        { type: "tool_use", id: "toolu_s", name: "search", input: { q: "x" } },
        { type: "tool_use", id: "toolu_j", name: "json_response", input: {} },
      ],
    }),
    { ...context, jsonToolName: "json_response" },
  );
  assert.equal(mixed.finishReason, "tool-calls");
});

test("server-tool and unknown blocks are skipped; empty text blocks too", () => {
  const result = parseAnthropicResponse(
    buildMessage({
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "" },
        { type: "text", text: "Answer." },
        { type: "future_block", payload: 1 },
      ],
    }),
    context,
  );
  assert.deepEqual(result.content, [{ type: "text", text: "Answer." }]);
});

test("an error envelope with HTTP 200, or a body that is not a message, throws", () => {
  assert.throws(
    () =>
      parseAnthropicResponse(
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        context,
      ),
    (error: unknown) => error instanceof GatewayError && error.code === "provider_overloaded",
  );
  for (const body of [null, [], "text", { type: "message" }]) {
    assert.throws(
      () => parseAnthropicResponse(body, context),
      (error: unknown) => error instanceof GatewayError && error.code === "provider_unavailable",
    );
  }
});

test("content entries that are not blocks are skipped, never a TypeError", () => {
  const body = { ...buildMessage(), content: [null, 3, "text", { type: "text", text: "Hi" }] };
  const result = parseAnthropicResponse(body, { upstreamModel: "claude-x" });
  assert.deepEqual(result.content, [{ type: "text", text: "Hi" }]);
});
