/**
 * Structural rules of each format's stream, checked on the raw frames the gateway sent (beyond what
 * the SDKs enforce while accumulating), as docs/formats.md describes them.
 */
import assert from "node:assert/strict";
import type { SseFrame } from "./wire-tap.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

/** The event name of the gateway's server-tool progress frames (docs/formats.md). */
export const TOOL_EVENT = "hi.tool_event";

const TOOL_EVENT_PHASES = ["started", "completed", "failed"];

/**
 * The payload every format carries in a `hi.tool_event` frame: tool, phase, call id and input;
 * an ended call adds its cost and duration, a failed one its error.
 */
export function checkToolEventPayload(payload: Json): void {
  assert.equal(typeof payload?.tool, "string", "hi.tool_event names its tool");
  assert.ok(TOOL_EVENT_PHASES.includes(payload.phase), `hi.tool_event phase ${payload.phase}`);
  assert.equal(typeof payload.call_id, "string", "hi.tool_event names its call");
  assert.equal(typeof payload.input, "object", "hi.tool_event carries the call's input");
  if (payload.phase === "started") {
    assert.equal(payload.cost_micro_usd, undefined, "a started call has no cost yet");
    return;
  }
  assert.ok(Number.isInteger(payload.cost_micro_usd) && payload.cost_micro_usd >= 0, "cost_micro_usd");
  assert.ok(Number.isInteger(payload.duration_ms) && payload.duration_ms >= 0, "duration_ms");
  assert.equal(payload.phase === "failed", payload.error !== undefined, "only a failed call has an error");
}

/**
 * Chat: role on the first delta, each tool call opened once with id/type/name and `arguments: ""`,
 * exactly one finish_reason, then the usage-only chunk (`choices: []`), then `[DONE]` — or, after a
 * failure, one error frame and nothing else. `hi.tool_event` frames are chunks of the stream with
 * empty `choices` and the payload in `hi_tool_event`, never with `error` or `usage`; the other
 * rules apply to the stream without them.
 */
export function checkChatStream(frames: SseFrame[]): void {
  const ids = new Set<string>();
  const ordinary = frames.filter((frame) => {
    if (frame.event !== TOOL_EVENT) return true;
    const chunk = JSON.parse(frame.data) as Json;
    assert.equal(chunk.object, "chat.completion.chunk", "a hi.tool_event frame is a chunk");
    assert.deepEqual(chunk.choices, [], "a hi.tool_event chunk has empty choices");
    assert.equal(chunk.error, undefined, "a hi.tool_event chunk has no error (clients would raise it)");
    assert.equal(chunk.usage, undefined, "a hi.tool_event chunk has no usage (clients would count it)");
    checkToolEventPayload(chunk.hi_tool_event);
    ids.add(chunk.id);
    return false;
  });
  for (const frame of ordinary) assert.equal(frame.event, undefined, "chat frames carry no event: line");
  const done = ordinary.at(-1)?.data === "[DONE]";
  assert.ok(!done || frames.at(-1)?.data === "[DONE]", "nothing follows [DONE]");
  const chunks = (done ? ordinary.slice(0, -1) : ordinary).map((frame) => JSON.parse(frame.data) as Json);
  for (const id of ids) assert.equal(id, chunks[0]?.id, "hi.tool_event chunks carry the stream's id");
  const failed = chunks.at(-1)?.error !== undefined;
  assert.ok(done !== failed, "a chat stream ends with [DONE], or with one error frame and nothing after it");
  const data = failed ? chunks.slice(0, -1) : chunks;
  assert.ok(
    data.every((chunk) => chunk.error === undefined),
    "an error frame is the last frame",
  );
  assert.equal(new Set(data.map((chunk) => chunk.id)).size, 1, "one id per stream");
  const withChoices = data.filter((chunk) => chunk.choices.length > 0);
  assert.equal(withChoices[0]?.choices[0].delta.role, "assistant", "role on the first delta");
  const opened = new Set<number>();
  for (const chunk of withChoices) {
    for (const call of chunk.choices[0].delta.tool_calls ?? []) {
      if (opened.has(call.index)) {
        assert.equal(call.id, undefined, "later fragments carry only index and arguments");
        continue;
      }
      opened.add(call.index);
      assert.equal(call.index, opened.size - 1, "tool-call indexes dense, in order");
      assert.equal(typeof call.id, "string");
      assert.equal(call.type, "function");
      assert.equal(typeof call.function.name, "string");
      assert.equal(call.function.arguments, "", "a call opens with empty arguments");
    }
  }
  if (failed) return;
  const finishes = withChoices.filter((chunk) => chunk.choices[0].finish_reason !== null);
  assert.equal(finishes.length, 1, "exactly one finish_reason");
  const last = data.at(-1);
  assert.deepEqual(last.choices, [], "the usage chunk comes last, without choices");
  assert.equal(typeof last.usage?.prompt_tokens, "number");
}

/** Responses items of server-tool calls: the calls of one round are all added before their results. */
const SERVER_TOOL_ITEMS = new Set(["web_search_call", "image_generation_call"]);

/**
 * Responses: `event:` equals `data.type`, sequence numbers from 0, one response id, items strictly
 * one after another (added → scoped events of that item only → output_item.done) save a round's
 * server-tool items (`web_search_call`, `image_generation_call`), which open together and close in
 * order; output indexes dense; the terminal response lists the done items in order. A failure is
 * `error` then `response.failed`, last. A `hi.tool_event` frame is a `keepalive` event numbered
 * with the others, carrying the payload in `hi_tool_event`.
 */
export function checkResponsesStream(frames: SseFrame[]): void {
  const events = frames.map((frame) => {
    const data = JSON.parse(frame.data) as Json;
    if (frame.event === TOOL_EVENT) {
      assert.equal(data.type, "keepalive", "a hi.tool_event frame is a keepalive event");
      checkToolEventPayload(data.hi_tool_event);
    } else {
      assert.equal(frame.event, data.type, "event: line equals data.type");
    }
    return data;
  });
  events.forEach((event, index) => {
    assert.equal(event.sequence_number, index, "sequence_number from 0");
  });
  assert.equal(events[0]?.type, "response.created");
  const ids = new Set(events.filter((event) => event.response).map((event) => event.response.id));
  assert.equal(ids.size, 1, "one response id per stream");
  const doneItems: Json[] = [];
  // Items added and not done yet, in output order: one at a time, except the server-tool calls of
  // one round, which are all added before their results (docs/formats.md) and close in order.
  const open: Json[] = [];
  for (const event of events) {
    if (event.type === "response.output_item.added") {
      const together = [...open, event.item].every((item) => SERVER_TOOL_ITEMS.has(item.type));
      assert.ok(open.length === 0 || together, "one item at a time");
      assert.equal(event.output_index, doneItems.length + open.length, "output indexes dense and in order");
      open.push(event.item);
    } else if (event.type === "response.output_item.done") {
      assert.equal(event.item.id, open[0]?.id, "output_item.done closes the earliest open item");
      assert.equal(event.output_index, doneItems.length);
      doneItems.push(event.item);
      open.shift();
    } else if (event.item_id !== undefined) {
      const position = open.findIndex((item) => item.id === event.item_id);
      assert.ok(position >= 0, `${event.type} belongs to an open item`);
      assert.equal(event.output_index, doneItems.length + position, `${event.type} output_index`);
    }
  }
  const terminal = events.at(-1);
  if (terminal.type === "response.failed") {
    assert.equal(events.at(-2)?.type, "error", "a failure is an error event, then response.failed");
    return;
  }
  assert.deepEqual(open, [], "every item closed");
  assert.ok(
    ["response.completed", "response.incomplete"].includes(terminal.type),
    `terminal ${terminal.type}`,
  );
  assert.equal(terminal.response.status, terminal.type === "response.completed" ? "completed" : "incomplete");
  assert.deepEqual(terminal.response.output, doneItems, "the terminal response carries the done items");
  assert.equal(typeof terminal.response.usage?.input_tokens, "number");
}

/**
 * Messages: every frame names its event; `message_start` first (pings aside: see the separate
 * "message_start first" test), blocks strictly sequential with indexes from 0, each stopped before
 * the next starts, then `message_delta` with the stop reason and usage, then `message_stop` — or an
 * `error` event, last. A `hi.tool_event` frame (`type` the same) comes after `message_start` and
 * before `message_delta`, never inside a block.
 */
export function checkMessagesStream(frames: SseFrame[]): void {
  const events = frames.map((frame) => {
    const data = JSON.parse(frame.data) as Json;
    assert.equal(frame.event, data.type, "every messages frame names its event");
    return data;
  });
  const content = events.filter((event) => event.type !== "ping");
  assert.equal(content[0]?.type, "message_start");
  let open: number | undefined;
  let next = 0;
  let deltaSeen = false;
  for (const event of content.slice(1)) {
    switch (event.type) {
      case "content_block_start":
        assert.equal(open, undefined, "blocks do not overlap");
        assert.equal(event.index, next, "block indexes from 0, in order");
        assert.ok(!deltaSeen, "no block after message_delta");
        open = event.index;
        next += 1;
        break;
      case "content_block_delta":
        assert.equal(event.index, open, "delta of the open block");
        break;
      case "content_block_stop":
        assert.equal(event.index, open, "stop of the open block");
        open = undefined;
        break;
      case "message_delta":
        assert.equal(open, undefined, "message_delta after the last block");
        assert.equal(typeof event.delta.stop_reason, "string");
        assert.equal(typeof event.usage?.output_tokens, "number");
        deltaSeen = true;
        break;
      case "message_stop":
        assert.ok(deltaSeen, "message_stop after message_delta");
        break;
      case TOOL_EVENT:
        assert.equal(open, undefined, "a hi.tool_event frame is never inside a block");
        assert.ok(!deltaSeen, "no hi.tool_event after message_delta");
        checkToolEventPayload(event);
        break;
      case "error":
        break;
      default:
        assert.fail(`unexpected event ${event.type}`);
    }
  }
  const last = content.at(-1)?.type;
  assert.ok(last === "message_stop" || last === "error", `last event ${last}`);
}
