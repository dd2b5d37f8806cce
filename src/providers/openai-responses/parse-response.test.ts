import assert from "node:assert/strict";
import { test } from "node:test";
import { buildResponse } from "../../../test/helpers/fake-openai-responses-upstream.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { mapResponsesFinishReason } from "./map-finish-reason.js";
import { mapResponsesUsage } from "./map-usage.js";
import { parseResponsesResponse } from "./parse-response.js";

const context = { upstreamModel: "gpt-5" };

test("a text response", () => {
  const result = parseResponsesResponse(
    buildResponse({ items: [{ type: "message", text: "Bonjour" }] }),
    context,
  );
  assert.deepEqual(result.content, [{ type: "text", text: "Bonjour" }]);
  assert.equal(result.finishReason, "stop");
  assert.equal(result.rawFinishReason, "completed");
  assert.equal(result.upstreamId, "resp_0fake000000000000000000000000000000000000000001");
  assert.equal(result.upstreamModel, "gpt-fake-2025-08-07");
});

test("reasoning then parallel function calls: state bound to the configured model, call_id as id", () => {
  const result = parseResponsesResponse(
    buildResponse({
      items: [
        {
          type: "reasoning",
          id: "rs_1",
          summary: ["**Plan**\n\nTwo calls.", "Then answer."],
          encryptedContent: "gAAAA",
        },
        { type: "function_call", name: "weather", arguments: '{"city":"Paris"}', callId: "call_a" },
        { type: "function_call", name: "weather", arguments: "", callId: "call_b" },
      ],
    }),
    context,
  );
  assert.deepEqual(result.content, [
    {
      type: "reasoning",
      text: "**Plan**\n\nTwo calls.\n\nThen answer.",
      providerState: {
        providerKind: "openai-responses",
        upstreamModel: "gpt-5",
        encryptedContent: "gAAAA",
        itemId: "rs_1",
      },
    },
    { type: "tool-call", id: "call_a", name: "weather", arguments: '{"city":"Paris"}' },
    { type: "tool-call", id: "call_b", name: "weather", arguments: "{}" },
  ]);
  assert.equal(result.finishReason, "tool-calls");
});

test("reasoning without summary keeps its state; without state and text it is skipped", () => {
  const result = parseResponsesResponse(
    buildResponse({
      items: [
        { type: "reasoning", id: "rs_1", encryptedContent: "gAAAA" },
        { type: "reasoning", id: "rs_2" },
        { type: "message", text: "Hi" },
      ],
    }),
    context,
  );
  assert.deepEqual(
    result.content.map((part) => part.type),
    ["reasoning", "text"],
  );
});

test("a refusal is text with the refusal finish", () => {
  const result = parseResponsesResponse(
    buildResponse({ items: [{ type: "message", text: "I can't help with that.", refusal: true }] }),
    context,
  );
  assert.deepEqual(result.content, [{ type: "text", text: "I can't help with that." }]);
  assert.equal(result.finishReason, "refusal");
});

test("incomplete responses map their reason", () => {
  const length = parseResponsesResponse(
    buildResponse({
      status: "incomplete",
      incompleteReason: "max_output_tokens",
      items: [{ type: "message", text: "Par" }],
    }),
    context,
  );
  assert.equal(length.finishReason, "length");
  assert.equal(length.rawFinishReason, "max_output_tokens");
  const filtered = parseResponsesResponse(
    buildResponse({ status: "incomplete", incompleteReason: "content_filter", items: [] }),
    context,
  );
  assert.equal(filtered.finishReason, "content-filter");
});

test("hosted-tool items are skipped, messages of several items concatenate in order", () => {
  const body = buildResponse({
    items: [
      { type: "message", text: "Looking." },
      { type: "message", text: " Found it." },
    ],
  });
  (body.output as unknown[]).splice(1, 0, { id: "ws_1", type: "web_search_call", status: "completed" });
  const result = parseResponsesResponse(body, context);
  assert.deepEqual(result.content, [
    { type: "text", text: "Looking." },
    { type: "text", text: " Found it." },
  ]);
});

test("usage: input includes cached, output includes reasoning; missing counters are 0", () => {
  assert.deepEqual(
    mapResponsesUsage({
      input_tokens: 4020,
      input_tokens_details: { cached_tokens: 4012, cache_write_tokens: 3 },
      output_tokens: 1926,
      output_tokens_details: { reasoning_tokens: 1792 },
      total_tokens: 5946,
    }),
    {
      inputTokens: 4020,
      outputTokens: 1926,
      cachedInputTokens: 4012,
      cacheWriteTokens: 3,
      cacheWrite1hTokens: 0,
      reasoningTokens: 1792,
    },
  );
  assert.deepEqual(mapResponsesUsage({ input_tokens: 5, output_tokens: null }).outputTokens, 0);
  assert.equal(mapResponsesUsage(undefined).inputTokens, 0);
});

test("finish mapping: unknown statuses are never a clean stop", () => {
  const plain = { hasToolCalls: false, hasRefusal: false };
  assert.equal(mapResponsesFinishReason("cancelled", undefined, plain), "other");
  assert.equal(mapResponsesFinishReason("incomplete", "something_new", plain), "other");
  assert.equal(
    mapResponsesFinishReason(undefined, undefined, { hasToolCalls: true, hasRefusal: false }),
    "tool-calls",
  );
});

test("a failed response or an error body throws the classified error", () => {
  const failed = {
    ...buildResponse(),
    status: "failed",
    error: { code: "rate_limit_exceeded", message: "Slow down" },
  };
  assert.throws(() => parseResponsesResponse(failed, context), { code: "provider_rate_limit" });
  const invalid = {
    ...buildResponse(),
    status: "failed",
    error: { code: "invalid_prompt", message: "Bad prompt" },
  };
  assert.throws(() => parseResponsesResponse(invalid, context), {
    code: "invalid_request",
    message: "Bad prompt",
  });
  assert.throws(() => parseResponsesResponse([], context), GatewayError);
  assert.throws(() => parseResponsesResponse({ id: "x" }, context), { code: "provider_unavailable" });
});

test("arguments that are not a string (an object, or missing) still become one JSON string", () => {
  const body = buildResponse({
    items: [{ type: "function_call", name: "f", arguments: "", callId: "call_1" }],
  });
  const output = body.output as Array<Record<string, unknown>>;
  output.push({ ...output[0], call_id: "call_2", arguments: { a: [1, 2] } });
  output.push({ ...output[0], call_id: "call_3", arguments: undefined });
  const result = parseResponsesResponse(body, context);
  assert.deepEqual(
    result.content.map((part) => (part.type === "tool-call" ? part.arguments : "")),
    ["{}", '{"a":[1,2]}', "{}"],
  );
});

test("a message item whose content is not a list of parts gives no text, never a TypeError", () => {
  for (const content of [
    0,
    "text",
    { type: "output_text" },
    [null, 1, { type: "output_text", text: "Hi" }],
  ]) {
    const body = buildResponse();
    (body.output as Array<Record<string, unknown>>)[0]!.content = content;
    const result = parseResponsesResponse(body, { upstreamModel: "gpt-x" });
    const text = Array.isArray(content) ? [{ type: "text", text: "Hi" }] : [];
    assert.deepEqual(result.content, text, JSON.stringify(content));
  }
});
