import assert from "node:assert/strict";
import { test } from "node:test";
import {
  buildFailureEvents,
  buildResponse,
  buildResponseEvents,
  numberEvents,
  type ResponseEvent,
  type ResponseSpec,
} from "../../../test/helpers/fake-openai-responses-upstream.js";
import type { CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { parseResponsesResponse } from "./parse-response.js";
import { parseResponsesStream } from "./parse-stream.js";

const context = { upstreamModel: "gpt-5" };

async function* toSse(events: Array<ResponseEvent | string>): AsyncGenerator<SseEvent> {
  for (const event of events) {
    yield typeof event === "string" ? { data: event } : { event: event.type, data: JSON.stringify(event) };
  }
}

async function collect(events: Array<ResponseEvent | string>): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of parseResponsesStream(toSse(events), context)) parts.push(part);
  return parts;
}

/** Folds parts the way a non-streaming consumer would, to compare with the JSON parse. */
function fold(parts: CanonicalStreamPart[]): CanonicalResult["content"] {
  const content: CanonicalResult["content"] = [];
  const open = new Map<string, { type: "text" | "reasoning"; text: string }>();
  for (const part of parts) {
    if (part.type === "text-start" || part.type === "reasoning-start") {
      open.set(part.id, { type: part.type === "text-start" ? "text" : "reasoning", text: "" });
    } else if (part.type === "text-delta" || part.type === "reasoning-delta") {
      open.get(part.id)!.text += part.delta;
    } else if (part.type === "text-end") {
      content.push({ type: "text", text: open.get(part.id)!.text });
    } else if (part.type === "reasoning-end") {
      content.push({
        type: "reasoning",
        text: open.get(part.id)!.text,
        ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
      });
    } else if (part.type === "tool-call") {
      content.push({ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments });
    }
  }
  return content;
}

/** Lifecycles never overlap: every block closes before the next one opens. */
function assertSequential(parts: CanonicalStreamPart[]): void {
  let openId: string | undefined;
  for (const part of parts) {
    if (part.type === "text-start" || part.type === "reasoning-start" || part.type === "tool-input-start") {
      assert.equal(openId, undefined, `${part.id} opened while ${openId} is open`);
      openId = part.id;
    }
    if (part.type === "text-delta" || part.type === "reasoning-delta" || part.type === "tool-input-delta") {
      assert.equal(part.id, openId);
    }
    if (part.type === "text-end" || part.type === "reasoning-end" || part.type === "tool-input-end") {
      assert.equal(part.id, openId);
      openId = undefined;
    }
  }
}

const reasoningThenCalls: ResponseSpec = {
  items: [
    {
      type: "reasoning",
      id: "rs_1",
      summary: [
        ["**Plan**", "\n\nTwo calls."],
        ["Then ", "answer."],
      ],
      encryptedContent: "enc-final",
      encryptedContentAdded: "enc-early",
    },
    { type: "function_call", name: "weather", arguments: ['{"city":', '"Paris"}'], callId: "call_a" },
    { type: "function_call", name: "weather", arguments: ['{"city":', '"Rome"}'], callId: "call_b" },
  ],
  usage: {
    input_tokens: 124,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 1926,
    output_tokens_details: { reasoning_tokens: 1792 },
  },
};

test("text: metadata first, one text block, usage and finish last", async () => {
  const parts = await collect(
    buildResponseEvents({ items: [{ type: "message", text: ["Hel", "lo ", "wörld"] }] }),
  );
  assert.deepEqual(
    parts.map((part) => part.type),
    [
      "response-metadata",
      "text-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-end",
      "usage",
      "finish",
    ],
  );
  assert.deepEqual(parts[0], {
    type: "response-metadata",
    upstreamId: "resp_0fake000000000000000000000000000000000000000001",
    upstreamModel: "gpt-fake-2025-08-07",
  });
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "stop", rawReason: "completed" });
});

test("reasoning then parallel calls: summary parts as paragraphs, done-item state, call indexes", async () => {
  const parts = await collect(buildResponseEvents(reasoningThenCalls));
  assertSequential(parts);
  const reasoningEnd = parts.find((part) => part.type === "reasoning-end");
  assert.deepEqual(reasoningEnd?.type === "reasoning-end" ? reasoningEnd.providerState : undefined, {
    providerKind: "openai-responses",
    upstreamModel: "gpt-5",
    encryptedContent: "enc-final",
    itemId: "rs_1",
  });
  const starts = parts.flatMap((part) =>
    part.type === "tool-input-start" ? [[part.id, part.index, part.name]] : [],
  );
  assert.deepEqual(starts, [
    ["call_a", 0, "weather"],
    ["call_b", 1, "weather"],
  ]);
  // The stream folds to exactly what the JSON parse of the same response gives.
  assert.deepEqual(fold(parts), parseResponsesResponse(buildResponse(reasoningThenCalls), context).content);
  const usage = parts.findLast((part) => part.type === "usage");
  assert.deepEqual(
    usage?.type === "usage" ? [usage.usage.inputTokens, usage.usage.reasoningTokens] : [],
    [124, 1792],
  );
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "completed" });
});

test("items completing out of order still come out in output order, nothing lost", async () => {
  const events = buildResponseEvents(reasoningThenCalls);
  // Move the reasoning item's done event after the first call's done event, as OpenRouter sends it.
  const reasoningDone = events.findIndex((event) => event.type === "response.output_item.done");
  const [moved] = events.splice(reasoningDone, 1);
  const firstCallDone = events.findIndex((event) => event.type === "response.output_item.done");
  events.splice(firstCallDone + 1, 0, moved);
  const parts = await collect(numberEvents(events));
  assertSequential(parts);
  assert.deepEqual(fold(parts), parseResponsesResponse(buildResponse(reasoningThenCalls), context).content);
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("reasoning-end") < types.indexOf("tool-input-start"));
});

test("items the stream never closed are closed from the terminal event's output", async () => {
  const events = buildResponseEvents(reasoningThenCalls).filter(
    (event) =>
      event.type !== "response.output_item.done" && event.type !== "response.function_call_arguments.done",
  );
  const parts = await collect(events);
  assertSequential(parts);
  assert.deepEqual(fold(parts), parseResponsesResponse(buildResponse(reasoningThenCalls), context).content);
});

test("a response without deltas (only added/done items) still yields full text and arguments", async () => {
  const spec: ResponseSpec = {
    items: [
      { type: "message", text: "Whole" },
      { type: "function_call", name: "f", arguments: '{"a":1}', callId: "call_1" },
    ],
  };
  const events = buildResponseEvents(spec).filter((event) => !event.type.endsWith(".delta"));
  const parts = await collect(events);
  assert.deepEqual(fold(parts), [
    { type: "text", text: "Whole" },
    { type: "tool-call", id: "call_1", name: "f", arguments: '{"a":1}' },
  ]);
  const deltas = parts.flatMap((part) => (part.type === "tool-input-delta" ? [part.delta] : []));
  assert.deepEqual(deltas, ['{"a":1}']);
});

test("an empty message opens no text block; a refusal streams as text and finishes as refusal", async () => {
  const empty = await collect(buildResponseEvents({ items: [{ type: "message", text: [] }] }));
  assert.ok(!empty.some((part) => part.type === "text-start"));
  const refusal = await collect(
    buildResponseEvents({ items: [{ type: "message", text: ["No", "."], refusal: true }] }),
  );
  assert.equal(refusal.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join(""), "No.");
  assert.deepEqual(refusal.at(-1), { type: "finish", reason: "refusal", rawReason: "completed" });
});

test("response.incomplete: max_output_tokens → length, content_filter → content-filter", async () => {
  const length = await collect(
    buildResponseEvents({
      status: "incomplete",
      incompleteReason: "max_output_tokens",
      items: [{ type: "message", text: "Par" }],
    }),
  );
  assert.deepEqual(length.at(-1), { type: "finish", reason: "length", rawReason: "max_output_tokens" });
  const filtered = await collect(
    buildResponseEvents({ status: "incomplete", incompleteReason: "content_filter", items: [] }),
  );
  assert.deepEqual(filtered.at(-1), {
    type: "finish",
    reason: "content-filter",
    rawReason: "content_filter",
  });
});

test("error before output: thrown with its classification, no parts", async () => {
  const events = [
    ...buildResponseEvents().slice(0, 2),
    ...buildFailureEvents({ code: "rate_limit_exceeded", message: "Rate limit reached", type: "requests" }),
  ];
  const parts: CanonicalStreamPart[] = [];
  await assert.rejects(
    async () => {
      for await (const part of parseResponsesStream(toSse(numberEvents(events)), context)) parts.push(part);
    },
    { code: "provider_rate_limit" },
  );
  assert.deepEqual(parts, []);
});

test("error events in both shapes, and response.failed alone, are classified", async () => {
  const created = buildResponseEvents().slice(0, 1);
  await assert.rejects(
    collect([...created, { type: "error", code: "server_error", message: "boom", param: null }]),
    { code: "provider_unavailable" },
  );
  await assert.rejects(
    collect([
      ...created,
      { type: "error", error: { type: "invalid_request_error", code: "invalid_prompt", message: "Bad" } },
    ]),
    { code: "invalid_request", message: "Bad" },
  );
  const [, failed] = buildFailureEvents({ code: "invalid_prompt", message: "Flagged prompt" });
  await assert.rejects(collect([...created, failed]), { code: "invalid_request", message: "Flagged prompt" });
});

test("error mid-stream: the parts before it, then the throw", async () => {
  const events = buildResponseEvents({ items: [{ type: "message", text: ["Hel", "lo", "!"] }] });
  const cut = events.findIndex((event) => event.type === "response.output_text.delta") + 2;
  const parts: CanonicalStreamPart[] = [];
  await assert.rejects(
    async () => {
      for await (const part of parseResponsesStream(
        toSse(
          numberEvents([
            ...events.slice(0, cut),
            ...buildFailureEvents({ code: "server_error", message: "x" }),
          ]),
        ),
        context,
      ))
        parts.push(part);
    },
    { code: "provider_unavailable" },
  );
  assert.equal(parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join(""), "Hello");
});

test("a stream ending without a terminal event, or with a malformed frame, throws", async () => {
  const events = buildResponseEvents().slice(0, -1);
  await assert.rejects(collect(events), {
    code: "provider_unavailable",
    message: "upstream stream ended early",
  });
  await assert.rejects(collect([...events.slice(0, 2), "{not json"]), { code: "provider_unavailable" });
});

test("unknown events are skipped and reading stops at the terminal event", async () => {
  const events = buildResponseEvents({ items: [{ type: "message", text: "Hi" }] });
  events.splice(2, 0, { type: "keepalive" }, { type: "response.something_new", output_index: 0 });
  const parts = await collect([
    ...numberEvents(events),
    ...buildResponseEvents({ items: [{ type: "message", text: "second" }] }),
  ]);
  assert.equal(parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join(""), "Hi");
  assert.equal(parts.filter((part) => part.type === "finish").length, 1);
});

test("reasoning without text: a block only when it carries encrypted content", async () => {
  const stateless = await collect(
    buildResponseEvents({ items: [{ type: "reasoning" }, { type: "message", text: "Hi" }] }),
  );
  assert.ok(!stateless.some((part) => part.type.startsWith("reasoning")));
  const withState = await collect(
    buildResponseEvents({
      items: [
        { type: "reasoning", id: "rs_x", encryptedContent: "enc" },
        { type: "message", text: "Hi" },
      ],
    }),
  );
  assert.deepEqual(
    withState.filter((part) => part.type.startsWith("reasoning")),
    [
      { type: "reasoning-start", id: "rs_x" },
      {
        type: "reasoning-end",
        id: "rs_x",
        providerState: {
          providerKind: "openai-responses",
          upstreamModel: "gpt-5",
          encryptedContent: "enc",
          itemId: "rs_x",
        },
      },
    ],
  );
});

test("terminal output is matched to streamed items by id, not by position", async () => {
  // A server that leaves an item out of the final `output` (recorded: openai-phase.1.chunks.txt).
  // The stream numbers the second item 2 while the final `output` holds it at position 1.
  const events = buildResponseEvents({
    items: [
      { type: "message", text: "A" },
      { type: "message", text: "B" },
    ],
  });
  for (const event of events) {
    if (event.output_index === 1) event.output_index = 2;
  }
  const parts = await collect(events);
  assert.equal(parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join(""), "AB");
  assert.equal(parts.filter((part) => part.type === "text-start").length, 2);
});

test("an item announced again, or done at another output index, is the same item: one call, closed once", async () => {
  // Found by fuzzing: a call's `output_item.done` carried a wrong `output_index`, and the parser
  // opened a second call with the same id while the first was open.
  const events = buildResponseEvents(reasoningThenCalls);
  const itemOf = (event: ResponseEvent) => event.item as { type?: string; id?: string } | undefined;
  const firstCall = events.find(
    (event) => event.type === "response.output_item.added" && itemOf(event)?.type === "function_call",
  )!;
  const done = events.find(
    (event) => event.type === "response.output_item.done" && itemOf(event)?.id === itemOf(firstCall)?.id,
  )!;
  done.output_index = 1_000;
  events.splice(events.indexOf(firstCall) + 1, 0, { ...firstCall, output_index: 7 });
  const parts = await collect(numberEvents(events));
  assertSequential(parts);
  assert.deepEqual(fold(parts), parseResponsesResponse(buildResponse(reasoningThenCalls), context).content);
  assert.equal(parts.filter((part) => part.type === "tool-input-start").length, 2);
});
