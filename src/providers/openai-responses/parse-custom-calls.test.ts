/**
 * Calls of passed-through tool types from an OpenAI Responses upstream: a `custom_tool_call`
 * becomes a call marked `custom` whose arguments are `{"input": <text>}` (streamed as escaped
 * pieces of that JSON), a `function_call` with a `namespace` keeps it; streamed and not, alike.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { numberEvents, type ResponseEvent } from "../../../test/helpers/fake-openai-responses-upstream.js";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { parseResponsesResponse } from "./parse-response.js";
import { parseResponsesStream } from "./parse-stream.js";

const context = { upstreamModel: "gpt-5" };
const PATCH = '*** Begin Patch\n*** Add File: "a.txt"\n+hé \\ 😀\n*** End Patch';

const customItem = {
  id: "ctc_1",
  type: "custom_tool_call",
  call_id: "call_p",
  name: "apply_patch",
  input: PATCH,
};
const namespacedItem = {
  id: "fc_2",
  type: "function_call",
  status: "completed",
  call_id: "call_s",
  namespace: "multi_agent_v1",
  name: "spawn_agent",
  arguments: '{"task":"x"}',
};

function events(pieces: string[]): ResponseEvent[] {
  const envelope = { id: "resp_1", object: "response", model: "gpt-5", output: [], usage: null };
  return numberEvents([
    { type: "response.created", response: { ...envelope, status: "in_progress" } },
    { type: "response.output_item.added", output_index: 0, item: { ...customItem, input: "" } },
    ...pieces.map((delta) => ({
      type: "response.custom_tool_call_input.delta",
      output_index: 0,
      item_id: "ctc_1",
      delta,
    })),
    { type: "response.custom_tool_call_input.done", output_index: 0, item_id: "ctc_1", input: PATCH },
    { type: "response.output_item.done", output_index: 0, item: customItem },
    { type: "response.output_item.added", output_index: 1, item: { ...namespacedItem, arguments: "" } },
    {
      type: "response.function_call_arguments.delta",
      output_index: 1,
      item_id: "fc_2",
      delta: namespacedItem.arguments,
    },
    { type: "response.output_item.done", output_index: 1, item: namespacedItem },
    {
      type: "response.completed",
      response: {
        ...envelope,
        status: "completed",
        output: [customItem, namespacedItem],
        usage: { input_tokens: 5, output_tokens: 9 },
      },
    },
  ]);
}

async function collect(list: ResponseEvent[]): Promise<CanonicalStreamPart[]> {
  async function* sse(): AsyncGenerator<SseEvent> {
    for (const event of list) yield { event: event.type, data: JSON.stringify(event) };
  }
  const parts: CanonicalStreamPart[] = [];
  for await (const part of parseResponsesStream(sse(), context)) parts.push(part);
  return parts;
}

test("a streamed custom_tool_call is a custom call whose argument deltas join to {input}, split anywhere", async () => {
  // Cut inside the surrogate pair of the emoji and right after a backslash.
  const cut = [
    PATCH.slice(0, 5),
    PATCH.slice(5, PATCH.indexOf("\\") + 1),
    PATCH.slice(PATCH.indexOf("\\") + 1, -13),
    PATCH.slice(-13),
  ];
  const emoji = PATCH.indexOf("😀");
  const pieces = [PATCH.slice(0, emoji + 1), PATCH.slice(emoji + 1)];
  for (const split of [cut, pieces, [PATCH]]) {
    const parts = await collect(events(split));
    const start = parts.find((part) => part.type === "tool-input-start" && part.id === "call_p");
    assert.deepEqual(start, {
      type: "tool-input-start",
      id: "call_p",
      index: 0,
      name: "apply_patch",
      custom: true,
    });
    const streamed = parts
      .filter((part) => part.type === "tool-input-delta" && part.id === "call_p")
      .map((part) => (part as { delta: string }).delta)
      .join("");
    assert.deepEqual(JSON.parse(streamed), { input: PATCH });
    const calls = parts.filter((part) => part.type === "tool-call");
    assert.deepEqual(calls, [
      {
        type: "tool-call",
        id: "call_p",
        index: 0,
        name: "apply_patch",
        arguments: JSON.stringify({ input: PATCH }),
        custom: true,
      },
      {
        type: "tool-call",
        id: "call_s",
        index: 1,
        name: "spawn_agent",
        arguments: '{"task":"x"}',
        namespace: "multi_agent_v1",
      },
    ]);
    assert.deepEqual(
      parts.find((part) => part.type === "tool-input-start" && part.id === "call_s"),
      { type: "tool-input-start", id: "call_s", index: 1, name: "spawn_agent", namespace: "multi_agent_v1" },
    );
    assert.equal((parts.at(-1) as { reason: string }).reason, "tool-calls");
  }
});

test("a custom call known only from its done item still streams prefix, input and suffix", async () => {
  const list = events([]).filter(
    (event) => !String(event.type).startsWith("response.custom_tool_call_input"),
  );
  const parts = await collect(list);
  const streamed = parts
    .filter((part) => part.type === "tool-input-delta" && part.id === "call_p")
    .map((part) => (part as { delta: string }).delta)
    .join("");
  assert.deepEqual(JSON.parse(streamed), { input: PATCH });
});

test("a non-streamed answer gives the same calls", () => {
  const result = parseResponsesResponse(
    {
      id: "resp_1",
      object: "response",
      status: "completed",
      model: "gpt-5",
      output: [customItem, namespacedItem],
      usage: { input_tokens: 5, output_tokens: 9 },
    },
    context,
  );
  assert.deepEqual(result.content, [
    {
      type: "tool-call",
      id: "call_p",
      name: "apply_patch",
      arguments: JSON.stringify({ input: PATCH }),
      custom: true,
    },
    {
      type: "tool-call",
      id: "call_s",
      name: "spawn_agent",
      arguments: '{"task":"x"}',
      namespace: "multi_agent_v1",
    },
  ]);
  assert.equal(result.finishReason, "tool-calls");
});
