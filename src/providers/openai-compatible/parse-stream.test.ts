import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { readArgumentFragment } from "./accumulate-tool-calls.js";
import { parseChatCompletionsStream } from "./parse-stream.js";

function chunk(delta: Record<string, unknown> | null, finishReason: string | null = null, index = 0) {
  return {
    id: "chatcmpl-9",
    model: "m-1",
    choices: [{ index, delta, finish_reason: finishReason }],
    usage: null,
  };
}

async function* toEvents(items: unknown[]): AsyncGenerator<SseEvent> {
  for (const item of items) yield { data: typeof item === "string" ? item : JSON.stringify(item) };
}

async function parse(items: unknown[]): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of parseChatCompletionsStream(toEvents(items))) parts.push(part);
  return parts;
}

function argumentsOf(parts: CanonicalStreamPart[]): string[] {
  return parts.flatMap((part) => (part.type === "tool-call" ? [part.arguments] : []));
}

/** Per tool-call id, the concatenated tool-input-delta text. */
function deltasById(parts: CanonicalStreamPart[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of parts)
    if (part.type === "tool-input-delta") result[part.id] = (result[part.id] ?? "") + part.delta;
  return result;
}

test("text stream: metadata, text lifecycle, usage, finish", async () => {
  const parts = await parse([
    { id: "", model: "", choices: [], prompt_filter_results: [] },
    chunk({ role: "assistant", content: "", refusal: null }),
    chunk({ content: "Hel" }),
    chunk({ content: "lo" }),
    chunk({}, "stop"),
    { id: "chatcmpl-9", model: "m-1", choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } },
    "[DONE]",
  ]);
  assert.deepEqual(parts, [
    { type: "response-metadata", upstreamId: "chatcmpl-9", upstreamModel: "m-1" },
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Hel" },
    { type: "text-delta", id: "text-0", delta: "lo" },
    { type: "text-end", id: "text-0" },
    {
      type: "usage",
      usage: {
        inputTokens: 5,
        outputTokens: 2,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        reasoningTokens: 0,
      },
    },
    { type: "finish", reason: "stop", rawReason: "stop" },
  ]);
});

test("reasoning_content then text: blocks never overlap", async () => {
  const parts = await parse([
    chunk({ role: "assistant", reasoning_content: "Let me " }),
    chunk({ reasoning_content: "think." }),
    chunk({ content: "Answer." }),
    chunk({}, "stop"),
  ]);
  assert.deepEqual(
    parts.map((part) => part.type),
    [
      "response-metadata",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-end",
      "finish",
    ],
  );
});

test("a chunk with both text and a tool call closes the text before the call opens", async () => {
  const parts = await parse([
    chunk({
      role: "assistant",
      content: "Checking.",
      tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "lookup", arguments: "" } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":1}' } }] }),
    chunk({}, "tool_calls"),
  ]);
  assert.deepEqual(parts.slice(1), [
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Checking." },
    { type: "text-end", id: "text-0" },
    { type: "tool-input-start", id: "call_x", index: 0, name: "lookup" },
    { type: "tool-input-delta", id: "call_x", delta: '{"q":1}' },
    { type: "tool-input-end", id: "call_x" },
    { type: "tool-call", id: "call_x", index: 0, name: "lookup", arguments: '{"q":1}' },
    { type: "finish", reason: "tool-calls", rawReason: "tool_calls" },
  ]);
});

test("interleaved parallel calls are kept apart by index", async () => {
  const parts = await parse([
    chunk({
      tool_calls: [
        { index: 0, id: "call_a", type: "function", function: { name: "search_circular", arguments: "" } },
      ],
    }),
    chunk({
      tool_calls: [
        { index: 1, id: "call_b", type: "function", function: { name: "search_circular", arguments: "" } },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '{"q":' } }] }),
    chunk({
      tool_calls: [
        { index: 1, function: { arguments: '"b"}' } },
        { index: 0, function: { arguments: '"a"}' } },
      ],
    }),
    chunk({}, "tool_calls"),
  ]);
  const calls = parts.filter((part) => part.type === "tool-call");
  assert.deepEqual(calls, [
    { type: "tool-call", id: "call_a", index: 0, name: "search_circular", arguments: '{"q":"a"}' },
    { type: "tool-call", id: "call_b", index: 1, name: "search_circular", arguments: '{"q":"b"}' },
  ]);
  assert.deepEqual(deltasById(parts), { call_a: '{"q":"a"}', call_b: '{"q":"b"}' });
});

test("edge shape (a): first delta with arguments null", async () => {
  const parts = await parse([
    chunk({
      tool_calls: [{ index: 0, id: "call_n", type: "function", function: { name: "f", arguments: null } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
    chunk({}, "tool_calls"),
  ]);
  assert.deepEqual(argumentsOf(parts), ['{"a":1}']);
});

test("edge shape (b): full name and arguments re-sent in later deltas", async () => {
  const parts = await parse([
    chunk({
      tool_calls: [
        { index: 0, id: "call_r", type: "function", function: { name: "get_weather", arguments: "" } },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { name: "get_weather", arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "get_weather", arguments: '"Paris"}' } }] }),
    chunk(
      {
        tool_calls: [
          { index: 0, id: "call_r", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      "tool_calls",
    ),
  ]);
  const call = parts.find((part) => part.type === "tool-call");
  assert.deepEqual(call, {
    type: "tool-call",
    id: "call_r",
    index: 0,
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  });
  assert.equal(parts.filter((part) => part.type === "tool-input-start").length, 1);
  assert.deepEqual(deltasById(parts), { call_r: '{"city":"Paris"}' });
});

test("edge shape (c): arguments as a JSON object are serialised once", async () => {
  const parts = await parse([
    chunk({
      tool_calls: [
        {
          index: 0,
          id: "call_o",
          type: "function",
          function: { name: "f", arguments: { city: "Paris", n: 2 } },
        },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: { city: "Paris", n: 2 } } }] }),
    chunk({}, "tool_calls"),
  ]);
  assert.deepEqual(argumentsOf(parts), ['{"city":"Paris","n":2}']);
  assert.doesNotMatch(JSON.stringify(parts), /object Object/);
});

test("edge shape (d): fragments that are not JSON on their own are concatenated byte-exact", async () => {
  const fragments = ['{"', "ci", 'ty": "Pa', 'ris", "note": "a \\"quoted\\" wörd 👋"', "}"];
  const parts = await parse([
    chunk({
      tool_calls: [{ index: 0, id: "call_d", type: "function", function: { name: "f", arguments: "" } }],
    }),
    ...fragments.map((fragment) => chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
    chunk({}, "tool_calls"),
  ]);
  const [args] = argumentsOf(parts);
  assert.equal(args, fragments.join(""));
  assert.deepEqual(JSON.parse(args), { city: "Paris", note: 'a "quoted" wörd 👋' });
});

test("a call without id or arguments gets a generated id and {}", async () => {
  const parts = await parse([
    chunk({ tool_calls: [{ index: 0, function: { name: "now" } }] }),
    chunk({}, "tool_calls"),
  ]);
  const start = parts.find((part) => part.type === "tool-input-start");
  assert.ok(start?.type === "tool-input-start");
  assert.match(start.id, /^call_[A-Za-z0-9]{24}$/);
  assert.deepEqual(argumentsOf(parts), ["{}"]);
  assert.deepEqual(deltasById(parts), { [start.id]: "{}" });
});

test("fragments before the name are buffered until the call can open", async () => {
  const parts = await parse([
    chunk({ tool_calls: [{ index: 0, id: "call_late", function: { arguments: '{"a"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "late", arguments: ":1}" } }] }),
    chunk({}, "tool_calls"),
  ]);
  assert.deepEqual(parts.slice(1, 4), [
    { type: "tool-input-start", id: "call_late", index: 0, name: "late" },
    { type: "tool-input-delta", id: "call_late", delta: '{"a":1}' },
    { type: "tool-input-end", id: "call_late" },
  ]);
});

test("calls without index are matched by id; calls reusing index 0 with new ids stay distinct", async () => {
  const parts = await parse([
    chunk({
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
      ],
    }),
    chunk({
      tool_calls: [
        {
          index: 0,
          id: "call_2",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"b"}' },
        },
      ],
    }),
    chunk({
      tool_calls: [
        {
          index: 0,
          id: "call_3",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"c"}' },
        },
      ],
    }),
    chunk({}, "tool_calls"),
  ]);
  assert.deepEqual(
    parts.flatMap((part) => (part.type === "tool-call" ? [[part.id, part.index, part.arguments]] : [])),
    [
      ["call_1", 0, '{"path":"a"}'],
      ["call_2", 1, '{"path":"b"}'],
      ["call_3", 2, '{"path":"c"}'],
    ],
  );
});

test("a refusal streams as text and finishes as a refusal", async () => {
  const parts = await parse([
    chunk({ role: "assistant", content: null, refusal: "" }),
    chunk({ refusal: "I'm sorry" }),
    chunk({}, "stop"),
  ]);
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "refusal", rawReason: "stop" });
  assert.ok(parts.some((part) => part.type === "text-delta" && part.delta === "I'm sorry"));
});

test("only choice 0 is read", async () => {
  const parts = await parse([
    chunk({ content: "zero" }),
    chunk({ content: "one" }, null, 1),
    chunk({}, "stop", 1),
    chunk({}, "stop"),
  ]);
  assert.deepEqual(
    parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])),
    ["zero"],
  );
});

test("a stream without finish_reason fails as provider_unavailable", async () => {
  await assert.rejects(parse([chunk({ content: "partial" })]), {
    code: "provider_unavailable",
    message: "upstream stream ended early",
  });
});

test("an error frame is classified and a malformed frame is an error", async () => {
  await assert.rejects(
    parse([chunk({ content: "a" }), { error: { message: "Overloaded", type: "overloaded_error" } }]),
    {
      code: "provider_overloaded",
    },
  );
  await assert.rejects(parse([chunk({ content: "a" }), "{not json"]), { code: "provider_unavailable" });
});

test("readArgumentFragment keeps cumulative hosts from doubling arguments", () => {
  assert.equal(readArgumentFragment('{"a":', '{"a":1}'), "1}");
  assert.equal(readArgumentFragment('{"a":1}', '{"a":1}'), "");
  assert.equal(readArgumentFragment('{"a":1}', '{ "a": 1 }'), "");
  assert.equal(readArgumentFragment('{"a":', '{"b":1}'), '{"b":1}');
  assert.equal(readArgumentFragment("", null), "");
  assert.equal(readArgumentFragment('{"a":1', { a: 1 }), "");
});

test("chunks with fields of the wrong type are read around, never a TypeError", async () => {
  const parts = await parse([
    { choices: [null, 1, "x"] },
    { choices: [{ index: 0, delta: 5 }] },
    { choices: [{ index: 0, delta: { content: "Hi", tool_calls: [null, 2] } }] },
    { choices: [{ index: 0, delta: { tool_calls: "calls" } }] },
    chunk({}, "stop"),
  ]);
  assert.deepEqual(
    parts.map((part) => part.type),
    ["response-metadata", "text-start", "text-delta", "text-end", "finish"],
  );
});

test("tool arguments streamed as many JSON-looking fragments cost time linear in their length", () => {
  // Re-parsing everything accumulated before each `{"a":1}` fragment would be quadratic.
  let accumulated = "[";
  const started = performance.now();
  for (let count = 0; count < 40_000; count += 1) accumulated += readArgumentFragment(accumulated, '{"a":1}');
  const elapsed = performance.now() - started;
  assert.equal(accumulated.length, 1 + 40_000 * 7, "every fragment was kept");
  assert.ok(elapsed < 1_500, `took ${Math.round(elapsed)} ms`);
});
