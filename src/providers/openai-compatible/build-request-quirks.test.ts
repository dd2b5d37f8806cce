/** Per-host quirks (ProviderConfig.quirks) applied by the Chat Completions request builder. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import type { ProviderQuirks } from "../../catalog/types.js";
import { buildChatCompletionsRequest } from "./build-request.js";

function quirks(overrides: Partial<ProviderQuirks>): ProviderQuirks {
  return {
    excludedParams: [],
    toolCallIdFormat: "any",
    maxTokensField: "max_completion_tokens",
    ...overrides,
  };
}

test("excludedParams: never sent, whether built by us or passed through by the caller", () => {
  const call = createTestCall({
    provider: {
      quirks: quirks({ excludedParams: ["seed", "parallel_tool_calls", "provider", "stream_options"] }),
    },
    request: {
      sampling: { seed: 7, temperature: 0.3 },
      parallelToolCalls: false,
      passthrough: { provider: { order: ["x"] }, prompt_cache_key: "k" },
    },
  });
  const { body } = buildChatCompletionsRequest(call, { stream: true });
  assert.equal("seed" in body, false);
  assert.equal("parallel_tool_calls" in body, false);
  assert.equal("provider" in body, false);
  assert.equal("stream_options" in body, false);
  assert.equal(body.temperature, 0.3);
  assert.equal(body.prompt_cache_key, "k");
  assert.equal(body.stream, true);
});

test("excludedParams cannot remove model, messages or stream", () => {
  const call = createTestCall({
    provider: { quirks: quirks({ excludedParams: ["model", "messages", "stream"] }) },
  });
  const { body } = buildChatCompletionsRequest(call, { stream: true });
  assert.equal(body.model, "upstream-model-1");
  assert.equal(body.messages.length, 1);
  assert.equal(body.stream, true);
});

test("maxTokensField: the cap goes under the host's field name only", () => {
  const legacy = buildChatCompletionsRequest(
    createTestCall({ provider: { quirks: quirks({ maxTokensField: "max_tokens" }) } }),
    { stream: false },
  ).body;
  assert.equal(legacy.max_tokens, 1024);
  assert.equal("max_completion_tokens" in legacy, false);
  const current = buildChatCompletionsRequest(createTestCall(), { stream: false }).body;
  assert.equal(current.max_completion_tokens, 1024);
  assert.equal("max_tokens" in current, false);
});

test("toolCallIdFormat alphanumeric-9: assistant calls and tool results rewritten consistently", () => {
  const messages = [
    { role: "user" as const, content: [{ type: "text" as const, text: "Weather in Paris and Rome?" }] },
    {
      role: "assistant" as const,
      content: [
        { type: "tool-call" as const, id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "weather", arguments: "{}" },
        {
          type: "tool-call" as const,
          id: "toolu_0167cfEnoQaPviGdVXA95zcu",
          name: "weather",
          arguments: "{}",
        },
        { type: "tool-call" as const, id: "D681PevKs", name: "weather", arguments: "{}" },
      ],
    },
    {
      role: "tool" as const,
      content: [
        { type: "tool-result" as const, toolCallId: "call_ZR5UUuTt3pf61kjwAJIYdVMj", content: [] },
        { type: "tool-result" as const, toolCallId: "toolu_0167cfEnoQaPviGdVXA95zcu", content: [] },
        { type: "tool-result" as const, toolCallId: "D681PevKs", content: [] },
      ],
    },
  ];
  const call = createTestCall({
    provider: { quirks: quirks({ toolCallIdFormat: "alphanumeric-9" }) },
    request: { messages },
  });
  const first = buildChatCompletionsRequest(call, { stream: false }).body.messages;
  const assistant = first[1] as { tool_calls: Array<{ id: string }> };
  const callIds = assistant.tool_calls.map((toolCall) => toolCall.id);
  const resultIds = first.slice(2).map((message) => (message as { tool_call_id: string }).tool_call_id);
  for (const id of callIds) assert.match(id, /^[A-Za-z0-9]{9}$/);
  assert.deepEqual(resultIds, callIds);
  assert.equal(callIds[2], "D681PevKs");
  assert.equal(new Set(callIds).size, 3);
  // The next turn (same history plus more) maps the ids identically.
  const second = buildChatCompletionsRequest(call, { stream: false }).body.messages;
  assert.deepEqual(second, first);
  // Without the quirk nothing changes.
  const plain = buildChatCompletionsRequest(createTestCall({ request: { messages } }), {
    stream: false,
  }).body;
  const plainAssistant = plain.messages[1] as { tool_calls: Array<{ id: string }> };
  assert.equal(plainAssistant.tool_calls[0].id, "call_ZR5UUuTt3pf61kjwAJIYdVMj");
});
