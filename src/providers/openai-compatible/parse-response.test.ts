import assert from "node:assert/strict";
import { test } from "node:test";
import { parseChatCompletionsResponse } from "./parse-response.js";

function completion(message: Record<string, unknown>, finishReason: string | null = "stop", usage?: unknown) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason }],
    ...(usage === undefined ? {} : { usage }),
  };
}

test("text, ids and usage", () => {
  const result = parseChatCompletionsResponse(
    completion({ content: "Hi there", refusal: null }, "stop", {
      prompt_tokens: 13,
      completion_tokens: 238,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 192 },
    }),
  );
  assert.deepEqual(result, {
    upstreamId: "chatcmpl-1",
    upstreamModel: "gpt-4o-2024-08-06",
    content: [{ type: "text", text: "Hi there" }],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: {
      inputTokens: 13,
      outputTokens: 238,
      cachedInputTokens: 4,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 192,
    },
  });
});

test("reasoning first, then text, then tool calls in order", () => {
  const result = parseChatCompletionsResponse(
    completion(
      {
        reasoning_content: "Think.",
        content: "Calling.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "f", arguments: '{"x":1}' } },
          { id: "call_b", type: "function", function: { name: "g", arguments: { y: 2 } } },
          { id: "call_c", type: "function", function: { name: "h", arguments: "" } },
        ],
      },
      "tool_calls",
    ),
  );
  assert.deepEqual(result.content, [
    { type: "reasoning", text: "Think." },
    { type: "text", text: "Calling." },
    { type: "tool-call", id: "call_a", name: "f", arguments: '{"x":1}' },
    { type: "tool-call", id: "call_b", name: "g", arguments: '{"y":2}' },
    { type: "tool-call", id: "call_c", name: "h", arguments: "{}" },
  ]);
  assert.equal(result.finishReason, "tool-calls");
});

test("`reasoning` field is read too; empty reasoning is dropped", () => {
  assert.deepEqual(parseChatCompletionsResponse(completion({ reasoning: "R", content: "T" })).content, [
    { type: "reasoning", text: "R" },
    { type: "text", text: "T" },
  ]);
  assert.deepEqual(
    parseChatCompletionsResponse(completion({ reasoning_content: "", content: "T" })).content,
    [{ type: "text", text: "T" }],
  );
});

test("a refusal becomes the text and the finish reason", () => {
  const result = parseChatCompletionsResponse(
    completion({ content: null, refusal: "I can't help with that." }),
  );
  assert.deepEqual(result.content, [{ type: "text", text: "I can't help with that." }]);
  assert.equal(result.finishReason, "refusal");
});

test("unknown finish reason is kept raw as 'other'; missing usage is zeros", () => {
  const result = parseChatCompletionsResponse(completion({ content: "x" }, "eos_token"));
  assert.equal(result.finishReason, "other");
  assert.equal(result.rawFinishReason, "eos_token");
  assert.equal(result.usage.inputTokens, 0);
});

test("a generated id replaces a missing tool-call id", () => {
  const result = parseChatCompletionsResponse(
    completion(
      { content: null, tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }] },
      "tool_calls",
    ),
  );
  const call = result.content[0];
  assert.equal(call.type, "tool-call");
  assert.match(call.type === "tool-call" ? call.id : "", /^call_[A-Za-z0-9]{24}$/);
});

test("an error envelope with HTTP 200 and a body without choices are errors", () => {
  assert.throws(
    () => parseChatCompletionsResponse({ error: { message: "overloaded", type: "overloaded_error" } }),
    { code: "provider_overloaded" },
  );
  assert.throws(() => parseChatCompletionsResponse({ id: "x", choices: [] }), {
    code: "provider_unavailable",
  });
  assert.throws(() => parseChatCompletionsResponse("nope"), { code: "provider_unavailable" });
});

test("fields of the wrong type are read around or refused as provider_unavailable, never a TypeError", () => {
  const refused = (body: unknown) =>
    assert.throws(() => parseChatCompletionsResponse(body), {
      name: "GatewayError",
      code: "provider_unavailable",
    });
  refused({ choices: 5 });
  refused({ choices: "x" });
  refused({ choices: [null, 7] });
  const odd = parseChatCompletionsResponse({
    choices: [null, { index: 0, message: "text", finish_reason: 7 }],
  });
  assert.deepEqual([odd.content, odd.finishReason, odd.rawFinishReason], [[], "other", undefined]);
  const calls = parseChatCompletionsResponse(
    completion({
      content: "x",
      tool_calls: [null, 3, { id: "call_1", function: { name: 9, arguments: "{}" } }],
    }),
  );
  assert.deepEqual(
    calls.content.map((item) => (item.type === "tool-call" ? [item.id, item.name] : item.type)),
    ["text", ["call_1", ""]],
  );
  assert.deepEqual(parseChatCompletionsResponse(completion({ content: "x", tool_calls: false })).content, [
    { type: "text", text: "x" },
  ]);
});
