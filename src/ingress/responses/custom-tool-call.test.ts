/**
 * A call marked `custom` is a `custom_tool_call` item and a namespaced call keeps its `namespace`,
 * streamed (added / custom_tool_call_input.delta / .done / done, accepted by the official SDK's
 * accumulator) and not, with the same final output.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { type CanonicalStreamPart, encodeCustomCallArguments } from "../../canonical/index.js";
import { foldStreamParts } from "../../providers/shared/fold-stream-parts.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { CustomInputDecoder } from "./custom-input-decoder.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const context: ResponsesEncodeContext = {
  requestId: "req_9",
  model: "openai/gpt-5",
  createdAt: 1_700_000_000,
};
const usage = {
  inputTokens: 10,
  outputTokens: 20,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};
const INPUT = '*** Begin Patch\n+say "hé" \\ 😀\n*** End Patch';
const ARGS = encodeCustomCallArguments(INPUT);

/** The arguments cut at awkward places: inside the prefix, after a backslash, inside `\uXXXX`. */
function cuts(text: string): string[] {
  const backslash = text.indexOf("\\");
  return [
    text.slice(0, 4),
    text.slice(4, backslash + 1),
    text.slice(backslash + 1, backslash + 3),
    text.slice(backslash + 3, -1),
    text.slice(-1),
  ];
}

const parts: CanonicalStreamPart[] = [
  { type: "tool-input-start", id: "call_p", index: 0, name: "apply_patch", custom: true },
  ...cuts(ARGS)
    .slice(0, 2)
    .map((delta) => ({ type: "tool-input-delta" as const, id: "call_p", delta })),
  // A second call starts while the first is open: it waits, then streams.
  { type: "tool-input-start", id: "call_s", index: 1, name: "spawn_agent", namespace: "multi_agent_v1" },
  { type: "tool-input-delta", id: "call_s", delta: '{"task":"x"}' },
  ...cuts(ARGS)
    .slice(2)
    .map((delta) => ({ type: "tool-input-delta" as const, id: "call_p", delta })),
  { type: "tool-input-end", id: "call_p" },
  { type: "tool-call", id: "call_p", index: 0, name: "apply_patch", arguments: ARGS, custom: true },
  { type: "tool-input-end", id: "call_s" },
  {
    type: "tool-call",
    id: "call_s",
    index: 1,
    name: "spawn_agent",
    arguments: '{"task":"x"}',
    namespace: "multi_agent_v1",
  },
  { type: "usage", usage },
  { type: "finish", reason: "tool-calls" },
];

function encode(): string {
  const encoder = createResponsesStreamEncoder(context);
  let text = "";
  for (const part of parts) text += encoder.push(part);
  return text + encoder.finish({ usage, costMicroUsd: 100, finishReason: "tool-calls" });
}

const expectedOutput = [
  {
    id: "ctc_req_9_0",
    type: "custom_tool_call",
    status: "completed",
    call_id: "call_p",
    name: "apply_patch",
    input: INPUT,
  },
  {
    id: "fc_req_9_1",
    type: "function_call",
    status: "completed",
    call_id: "call_s",
    name: "spawn_agent",
    arguments: '{"task":"x"}',
    namespace: "multi_agent_v1",
  },
];

function client(sse: string): OpenAI {
  return new OpenAI({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    maxRetries: 0,
    fetch: async () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
  });
}

test("streamed: a custom_tool_call item with its input events, a function_call keeping its namespace", async () => {
  const sse = encode();
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await client(sse).responses.create({ model: "m", input: "x", stream: true }))
    events.push(event);
  const custom = events.filter((event) => "output_index" in event && event.output_index === 0);
  assert.deepEqual(
    [...new Set(custom.map((event) => event.type))],
    [
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
    ],
  );
  const added = custom[0];
  assert.ok(added.type === "response.output_item.added");
  assert.deepEqual(added.item, {
    id: "ctc_req_9_0",
    type: "custom_tool_call",
    status: "in_progress",
    call_id: "call_p",
    name: "apply_patch",
    input: "",
  });
  const deltas = custom.flatMap((event) =>
    event.type === "response.custom_tool_call_input.delta" ? [event.delta] : [],
  );
  assert.equal(deltas.join(""), INPUT);
  const done = custom.find((event) => event.type === "response.custom_tool_call_input.done");
  assert.ok(done?.type === "response.custom_tool_call_input.done");
  assert.equal(done.input, INPUT);
  const namespacedAdded = events.find(
    (event) => event.type === "response.output_item.added" && event.output_index === 1,
  );
  assert.ok(namespacedAdded?.type === "response.output_item.added");
  assert.equal((namespacedAdded.item as { namespace?: string }).namespace, "multi_agent_v1");
  const completed = events.at(-1);
  assert.ok(completed?.type === "response.completed");
  assert.deepEqual(completed.response.output, expectedOutput);

  // The SDK's stream helper accumulates the input from the deltas.
  const final = await client(sse).responses.stream({ model: "m", input: "x" }).finalResponse();
  assert.deepEqual(
    final.output.map((item) =>
      item.type === "function_call" ? { ...item, parsed_arguments: undefined } : item,
    ),
    expectedOutput.map((item) =>
      item.type === "function_call" ? { ...item, parsed_arguments: undefined } : item,
    ),
  );
});

test("not streamed: the same items", () => {
  const response = encodeResponsesResult(
    foldStreamParts(parts),
    { usage, costMicroUsd: 100, finishReason: "tool-calls" },
    context,
  );
  assert.deepEqual(response.output, expectedOutput);
});

test("the input decoder gives the text back whatever the cuts, and stops at the closing quote", () => {
  for (let size = 1; size <= 7; size += 1) {
    const decoder = new CustomInputDecoder();
    let text = "";
    for (let start = 0; start < ARGS.length; start += size)
      text += decoder.decode(ARGS.slice(start, start + size));
    assert.equal(text, INPUT, `cut every ${size}`);
    const escaped = new CustomInputDecoder();
    const args = String.raw`{"input":"a\u00e9\ud83d\ude00"}`;
    let decoded = "";
    for (let start = 0; start < args.length; start += size)
      decoded += escaped.decode(args.slice(start, start + size));
    assert.equal(decoded, "aé😀", `escapes cut every ${size}`);
  }
});
