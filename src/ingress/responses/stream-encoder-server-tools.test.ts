/** Server tools in the Responses stream: web_search_call items, annotations and hi.tool_event frames. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type {
  CanonicalStreamPart,
  CanonicalUsage,
  ResultContent,
  ServerToolCall,
  ServerToolId,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createItemSeal, type ItemSeal } from "./item-seal.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const context: ResponsesEncodeContext = {
  requestId: "req_3",
  model: "openai/gpt-5",
  createdAt: 1_700_000_000,
};
const usage: CanonicalUsage = {
  inputTokens: 10,
  outputTokens: 5,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};
const settlement: Settlement = { usage, costMicroUsd: 100, finishReason: "stop" };
const FR = "https://example.com/fr";
const SPAN = "([example.com](https://example.com/fr))";

function call(
  id: string,
  tool: ServerToolId,
  input: Record<string, unknown>,
  events = false,
): ServerToolCall {
  return { id, tool, input, events };
}

function resultOf(of: ServerToolCall, status: "completed" | "failed" = "completed"): ServerToolResult {
  const base = {
    callId: of.id,
    tool: of.tool,
    input: of.input,
    costMicroUsd: 0,
    durationMs: 1,
    events: of.events,
  };
  if (status === "failed") {
    return { ...base, status, error: { code: "unavailable", message: "The backend did not answer." } };
  }
  const output: ServerToolResult["output"] =
    of.tool === "web_search"
      ? {
          kind: "search",
          query: String(of.input.query),
          sources: [{ url: FR, title: "France", snippet: "", pageAge: null }],
        }
      : of.tool === "web_fetch"
        ? {
            kind: "fetch",
            url: String(of.input.url),
            finalUrl: String(of.input.url),
            title: "France",
            retrievedAt: "2026-11-26T12:00:00Z",
            contentType: "text/html",
            bytes: 10,
            text: "France",
            truncated: false,
          }
        : { kind: "datetime", utc: "2026-11-26T12:00:00Z", timezones: [] };
  return { ...base, status, output };
}

function cite(id: string, text: string, span = SPAN): CanonicalStreamPart {
  const startIndex = text.indexOf(span);
  const citation: UrlCitation = {
    url: FR,
    title: "France",
    startIndex,
    endIndex: startIndex + span.length,
    citedText: "",
  };
  return { type: "citation", id, citation };
}

interface StreamEvent {
  type: string;
  sequence_number: number;
  [key: string]: unknown;
}

interface Frame {
  event: string;
  data: StreamEvent;
}

function encodeStream(parts: readonly CanonicalStreamPart[], seal?: ItemSeal): string {
  const encoder = createResponsesStreamEncoder(context, seal);
  let sse = "";
  for (const part of parts) sse += encoder.push(part);
  return sse + encoder.finish(settlement);
}

function parseFrames(sse: string): Frame[] {
  return sse
    .split("\n\n")
    .filter((frame) => frame !== "" && !frame.startsWith(":"))
    .map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      return { event: eventLine.slice("event: ".length), data: JSON.parse(dataLine.slice("data: ".length)) };
    });
}

/** Events as a client sees them: the `data` objects, `hi.tool_event` frames included as keepalive. */
function parseEvents(sse: string): StreamEvent[] {
  return parseFrames(sse).map((frame) => frame.data);
}

/** The item type each family of item-scoped events belongs to. */
const EVENT_ITEM_TYPES: Array<[string, string]> = [
  ["response.web_search_call.", "web_search_call"],
  ["response.output_text.", "message"],
  ["response.content_part.", "message"],
  ["response.function_call_arguments.", "function_call"],
  ["response.reasoning_summary_", "reasoning"],
];

/**
 * The rules the strictest openai-node accumulators hold a stream to: one `response.created` then
 * one `response.in_progress` first, a terminal event last and no lifecycle event in between (each
 * replaces the snapshot); `output_item.added` appends at exactly the current output length with a
 * non-empty id; every item-scoped event names the id of the item at its output index, of the right
 * type; `output_item.done` replaces the item with the same id and type. Returns the final output.
 */
function assertAccumulates(events: readonly StreamEvent[]): Array<Record<string, unknown>> {
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
    "gap-free sequence numbers",
  );
  assert.deepEqual(
    events.slice(0, 2).map((event) => event.type),
    ["response.created", "response.in_progress"],
  );
  const lifecycle = events.filter((event) => "response" in event).map((event) => event.type);
  assert.deepEqual(lifecycle.slice(0, 2), ["response.created", "response.in_progress"]);
  assert.equal(lifecycle.length, 3, "no lifecycle event between the first two and the terminal one");
  const output: Array<Record<string, unknown>> = [];
  for (const event of events.slice(2, -1)) {
    if (event.type === "keepalive") continue;
    const item = event.item as Record<string, unknown> | undefined;
    if (event.type === "response.output_item.added") {
      assert.equal(event.output_index, output.length, "appended at the current output length");
      assert.ok(typeof item?.id === "string" && item.id !== "");
      output.push(item);
    } else if (event.type === "response.output_item.done") {
      const current = output[event.output_index as number];
      assert.ok(current && item, `done for an added item: ${JSON.stringify(event)}`);
      assert.equal(item.id, current.id);
      assert.equal(item.type, current.type);
      output[event.output_index as number] = item;
    } else {
      const current = output[event.output_index as number];
      assert.ok(current, `${event.type} names an added item`);
      assert.equal(event.item_id, current.id, `${event.type} names the item at its index`);
      const family = EVENT_ITEM_TYPES.find(([prefix]) => event.type.startsWith(prefix));
      assert.ok(family, `known event ${event.type}`);
      assert.equal(current.type, family[1], `${event.type} on a ${family[1]} item`);
    }
  }
  const terminal = events.at(-1) as StreamEvent;
  assert.equal(terminal.type, "response.completed");
  assert.deepEqual((terminal.response as { output: unknown }).output, output, "completed repeats every item");
  return output;
}

/** The canonical result the engine folds from the same parts. */
function fold(parts: readonly CanonicalStreamPart[]): ResultContent[] {
  const content: ResultContent[] = [];
  const open = new Map<string, ResultContent>();
  for (const part of parts) {
    if (part.type === "text-delta" || part.type === "reasoning-delta") {
      let entry = open.get(part.id);
      if (entry === undefined) {
        entry = part.type === "text-delta" ? { type: "text", text: "" } : { type: "reasoning", text: "" };
        open.set(part.id, entry);
        content.push(entry);
      }
      if (entry.type === "text" || entry.type === "reasoning") entry.text += part.delta;
    } else if (part.type === "citation") {
      const entry = open.get(part.id);
      if (entry?.type === "text") entry.citations = [...(entry.citations ?? []), part.citation];
    } else if (part.type === "server-tool-call" || part.type === "server-tool-result") {
      content.push(part);
    } else if (part.type === "tool-call") {
      content.push({ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments });
    }
  }
  return content;
}

const search = call("s_1", "web_search", { query: "capital of france" });
const read = call("f_2", "web_fetch", { url: FR });
const answer = `Paris ${SPAN}.`;

/** Round 1: reasoning, text, a search; round 2: a page read; round 3: the cited answer. */
const threeRounds: CanonicalStreamPart[] = [
  { type: "reasoning-delta", id: "r1", delta: "Search first." },
  { type: "reasoning-end", id: "r1" },
  { type: "text-delta", id: "t1", delta: "Checking." },
  { type: "text-end", id: "t1" },
  { type: "server-tool-call", call: search },
  { type: "server-tool-result", result: resultOf(search) },
  { type: "server-tool-call", call: read },
  { type: "server-tool-result", result: resultOf(read) },
  { type: "text-delta", id: "t3", delta: "Paris " },
  { type: "text-delta", id: "t3", delta: SPAN },
  cite("t3", answer),
  { type: "text-delta", id: "t3", delta: "." },
  { type: "text-end", id: "t3" },
];

test("a search: added in progress without action, in_progress and searching, then completed and the full item", () => {
  const events = parseEvents(
    encodeStream([
      { type: "server-tool-call", call: search },
      { type: "server-tool-result", result: resultOf(search) },
    ]),
  );
  assert.deepEqual(events.slice(2, -1), [
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id: "ws_s_1", type: "web_search_call", status: "in_progress" },
      sequence_number: 2,
    },
    { type: "response.web_search_call.in_progress", item_id: "ws_s_1", output_index: 0, sequence_number: 3 },
    { type: "response.web_search_call.searching", item_id: "ws_s_1", output_index: 0, sequence_number: 4 },
    { type: "response.web_search_call.completed", item_id: "ws_s_1", output_index: 0, sequence_number: 5 },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: {
        id: "ws_s_1",
        type: "web_search_call",
        status: "completed",
        action: {
          type: "search",
          query: "capital of france",
          queries: ["capital of france"],
          sources: [{ type: "url", url: FR }],
        },
      },
      sequence_number: 6,
    },
  ]);
});

test("a failed call has no completed event (the format has no failed one): its done item says failed", () => {
  const events = parseEvents(
    encodeStream([
      { type: "server-tool-call", call: read },
      { type: "server-tool-result", result: resultOf(read, "failed") },
    ]),
  );
  assert.deepEqual(
    events.slice(2, -1).map((event) => event.type),
    [
      "response.output_item.added",
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.output_item.done",
    ],
  );
  assert.deepEqual(events.at(-2)?.item, {
    id: "ws_f_2",
    type: "web_search_call",
    status: "failed",
    action: { type: "open_page", url: FR },
  });
});

test("rounds with text, reasoning, a search and a page read stream as the accumulator expects, cited", () => {
  const events = parseEvents(encodeStream(threeRounds));
  const output = assertAccumulates(events);
  assert.deepEqual(
    output.map((item) => [item.type, item.id]),
    [
      ["reasoning", "rs_req_3_0"],
      ["message", "msg_req_3_1"],
      ["web_search_call", "ws_s_1"],
      ["web_search_call", "ws_f_2"],
      ["message", "msg_req_3_4"],
    ],
  );
  const types = events.map((event) => event.type);
  const annotationAt = types.indexOf("response.output_text.annotation.added");
  const annotation = { type: "url_citation", url: FR, title: "France", start_index: 6, end_index: 45 };
  assert.deepEqual(events[annotationAt], {
    type: "response.output_text.annotation.added",
    item_id: "msg_req_3_4",
    output_index: 4,
    content_index: 0,
    annotation_index: 0,
    annotation,
    sequence_number: annotationAt,
  });
  // After the delta that completed the span, before the rest of the text and the done events.
  assert.equal((events[annotationAt - 1] as { delta?: string }).delta, SPAN);
  assert.equal((events[annotationAt + 1] as { delta?: string }).delta, ".");
  const textDone = events.findLast((event) => event.type === "response.output_text.done");
  const partDone = events.findLast((event) => event.type === "response.content_part.done");
  assert.deepEqual(textDone?.annotations, [annotation]);
  assert.deepEqual((partDone?.part as { annotations: unknown } | undefined)?.annotations, [annotation]);
  assert.deepEqual((output[4].content as Array<{ annotations: unknown }>)[0].annotations, [annotation]);
});

test("a round's calls are all added before any result, then each result finishes its own item", () => {
  const second = call("s_3", "web_search", { query: "paris population" });
  const clock = call("d_4", "datetime", {});
  const parts: CanonicalStreamPart[] = [
    { type: "text-delta", id: "t1", delta: "Looking." },
    { type: "server-tool-call", call: search },
    { type: "server-tool-call", call: clock },
    { type: "server-tool-call", call: second },
    { type: "server-tool-call", call: read },
    { type: "server-tool-result", result: resultOf(read) },
    { type: "server-tool-result", result: resultOf(clock) },
    { type: "server-tool-result", result: resultOf(search, "failed") },
    { type: "server-tool-result", result: resultOf(second) },
    { type: "text-delta", id: "t2", delta: "Done." },
  ];
  const events = parseEvents(encodeStream(parts));
  const output = assertAccumulates(events);
  assert.deepEqual(
    output.map((item) => [item.id, item.status]),
    [
      ["msg_req_3_0", "completed"],
      ["ws_s_1", "failed"],
      ["ws_s_3", "completed"],
      ["ws_f_2", "completed"],
      ["msg_req_3_4", "completed"],
    ],
  );
  assert.deepEqual(
    events
      .filter((event) => event.type.startsWith("response.output_item."))
      .map((event) => `${event.type.slice("response.output_item.".length)} ${event.output_index}`),
    ["added 0", "done 0", "added 1", "added 2", "added 3", "done 3", "done 1", "done 2", "added 4", "done 4"],
  );
});

test("response.completed.output equals the non-streamed output for the same run, with or without a seal", () => {
  const seal = createItemSeal(Buffer.alloc(32, 1));
  const runs: CanonicalStreamPart[][] = [
    threeRounds,
    [
      { type: "server-tool-call", call: search },
      { type: "server-tool-call", call: read },
      { type: "server-tool-result", result: resultOf(search) },
    ],
    [
      { type: "text-delta", id: "t1", delta: "🇫🇷 Before. " },
      { type: "server-tool-call", call: call("d", "datetime", {}, true) },
      { type: "server-tool-result", result: resultOf(call("d", "datetime", {}, true)) },
      { type: "text-delta", id: "t2", delta: answer },
      cite("t2", answer),
      { type: "tool-call", id: "fc_1", index: 0, name: "lookup", arguments: "{}" },
    ],
  ];
  for (const parts of runs) {
    const content = fold(parts);
    const plain = parseEvents(encodeStream(parts)).at(-1)?.response as { output: unknown[] };
    const expected = encodeResponsesResult({ content, finishReason: "stop", usage }, settlement, context);
    assert.deepEqual(plain.output, expected.output);
    // Sealed: web_search_call and reasoning ids are the same in both modes (a streamed message's
    // id goes out before its text, so only the non-streamed one carries it).
    const sealed = parseEvents(encodeStream(parts, seal)).at(-1)?.response as {
      output: Array<{ id: string }>;
    };
    const sealedExpected = encodeResponsesResult(
      { content, finishReason: "stop", usage },
      settlement,
      context,
      seal,
    );
    assert.deepEqual(
      sealed.output.map((item) => item.id),
      sealedExpected.output.map((item) => (item.type === "message" ? item.id.split(".")[0] : item.id)),
    );
  }
});

test("a citation shifts by the text its block joins in the message; a block buffered behind an item keeps its citation", () => {
  const head = "🇫🇷 Before. ";
  const clock = call("d", "datetime", {});
  const joined = parseEvents(
    encodeStream([
      { type: "text-delta", id: "t1", delta: head },
      { type: "server-tool-call", call: clock },
      { type: "server-tool-result", result: resultOf(clock) },
      { type: "text-delta", id: "t2", delta: answer },
      cite("t2", answer),
    ]),
  );
  const added = joined.find((event) => event.type === "response.output_text.annotation.added");
  assert.deepEqual(added?.annotation, {
    type: "url_citation",
    url: FR,
    title: "France",
    start_index: head.length + 6,
    end_index: head.length + 45,
  });
  const text = joined.findLast((event) => event.type === "response.output_text.done")?.text as string;
  assert.equal(text.slice(head.length + 6, head.length + 45), SPAN);

  // A reasoning item is open while the cited text arrives: text and citation wait, then go out in order.
  const buffered = parseEvents(
    encodeStream([
      { type: "reasoning-delta", id: "r", delta: "thinking" },
      { type: "text-delta", id: "t", delta: answer },
      cite("t", answer),
      { type: "reasoning-end", id: "r" },
    ]),
  );
  assertAccumulates(buffered);
  const types = buffered.map((event) => event.type);
  assert.ok(
    types.indexOf("response.output_text.delta") < types.indexOf("response.output_text.annotation.added"),
  );
  assert.deepEqual(
    buffered.find((event) => event.type === "response.output_text.annotation.added")?.annotation,
    { type: "url_citation", url: FR, title: "France", start_index: 6, end_index: 45 },
  );
});

test("a server-tool call arriving while a function call streams waits behind it, with its result", () => {
  const parts: CanonicalStreamPart[] = [
    { type: "tool-input-start", id: "fc_1", index: 0, name: "lookup" },
    { type: "server-tool-call", call: search },
    { type: "tool-input-delta", id: "fc_1", delta: "{}" },
    { type: "server-tool-result", result: resultOf(search) },
    { type: "tool-call", id: "fc_1", index: 0, name: "lookup", arguments: "{}" },
  ];
  const output = assertAccumulates(parseEvents(encodeStream(parts)));
  assert.deepEqual(
    output.map((item) => [item.type, item.status]),
    [
      ["function_call", "completed"],
      ["web_search_call", "completed"],
    ],
  );
});

test("hi.tool_event frames: keepalive events with the payload, for calls with events only, named like their item", () => {
  const withEvents = call("s_9", "web_search", { query: "q" }, true);
  const clock = call("d_1", "datetime", { timezone: "UTC" }, true);
  const quietClock = call("d_2", "datetime", {});
  const frames = parseFrames(
    encodeStream([
      { type: "server-tool-call", call: withEvents },
      { type: "server-tool-call", call: clock },
      { type: "server-tool-call", call: quietClock },
      { type: "server-tool-call", call: search },
      { type: "server-tool-result", result: resultOf(withEvents) },
      { type: "server-tool-result", result: resultOf(clock) },
      { type: "server-tool-result", result: resultOf(quietClock) },
      { type: "server-tool-result", result: resultOf(search) },
    ]),
  );
  assertAccumulates(frames.map((frame) => frame.data));
  const toolEvents = frames.filter((frame) => frame.event === "hi.tool_event");
  assert.ok(toolEvents.every((frame) => frame.data.type === "keepalive"));
  assert.deepEqual(
    toolEvents.map((frame) => frame.data.hi_tool_event),
    [
      { tool: "web_search", phase: "started", call_id: "ws_s_9", input: { query: "q" } },
      { tool: "datetime", phase: "started", call_id: "d_1", input: { timezone: "UTC" } },
      {
        tool: "web_search",
        phase: "completed",
        call_id: "ws_s_9",
        input: { query: "q" },
        output: { result_count: 1, urls: [FR] },
        cost_micro_usd: 0,
        duration_ms: 1,
      },
      {
        tool: "datetime",
        phase: "completed",
        call_id: "d_1",
        input: { timezone: "UTC" },
        output: { utc: "2026-11-26T12:00:00Z", timezones: [] },
        cost_micro_usd: 0,
        duration_ms: 1,
      },
    ],
  );
  // Each frame in full: the event name, then `type`, `sequence_number` and the payload.
  const sse = encodeStream([{ type: "server-tool-call", call: clock }]);
  assert.ok(
    sse.includes(
      'event: hi.tool_event\ndata: {"type":"keepalive","sequence_number":2,"hi_tool_event":' +
        '{"tool":"datetime","phase":"started","call_id":"d_1","input":{"timezone":"UTC"}}}\n\n',
    ),
  );
  // The started event follows the item's native events; the ended one follows its done event.
  const order = frames.map((frame) => frame.data.type);
  const searchEnded = frames.findIndex(
    (frame) => (frame.data.hi_tool_event as { phase?: string })?.phase === "completed",
  );
  assert.equal(order[order.indexOf("keepalive") - 1], "response.web_search_call.searching");
  assert.equal(order[searchEnded - 1], "response.output_item.done");
  assert.equal(
    encodeStream([
      { type: "server-tool-call", call: quietClock },
      { type: "server-tool-result", result: resultOf(quietClock) },
    ]).includes("hi.tool_event"),
    false,
  );
});

test("a call whose result never came is finished as failed when the stream finishes", () => {
  const events = parseEvents(encodeStream([{ type: "server-tool-call", call: search }]));
  const output = assertAccumulates(events);
  assert.deepEqual(output, [
    {
      id: "ws_s_1",
      type: "web_search_call",
      status: "failed",
      action: { type: "search", query: "capital of france", queries: ["capital of france"], sources: [] },
    },
  ]);
});
