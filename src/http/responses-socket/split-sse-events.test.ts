import assert from "node:assert/strict";
import { test } from "node:test";
import { createResponsesStreamEncoder } from "../../ingress/responses/stream-encoder.js";
import { splitSseEvents } from "./split-sse-events.js";

test("each SSE event's data is one message; comments and empty text are no events", () => {
  const frames =
    'event: response.created\ndata: {"type":"response.created","sequence_number":0}\n\n' +
    ": keep-alive\n\n" +
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"a\\n\\nb"}\n\n';
  assert.deepEqual(splitSseEvents(frames), [
    '{"type":"response.created","sequence_number":0}',
    '{"type":"response.output_text.delta","delta":"a\\n\\nb"}',
  ]);
  assert.deepEqual(splitSseEvents(""), []);
  assert.deepEqual(splitSseEvents(": keep-alive\n\n"), []);
});

test("an event's data lines are joined with a line feed; 'data:' without a space keeps its text whole", () => {
  assert.deepEqual(splitSseEvents("data: first\ndata:second\nid: 7\n\ndata:  padded\n\n"), [
    "first\nsecond",
    " padded",
  ]);
});

test("the responses encoder's stream splits into its events, each a JSON object with its type", () => {
  const encoder = createResponsesStreamEncoder({ requestId: "r".repeat(22), model: "m", createdAt: 1 });
  const frames =
    encoder.push({ type: "text-delta", id: "t", delta: "Hello" }) +
    encoder.keepAlive() +
    encoder.finish({
      usage: {
        inputTokens: 1,
        outputTokens: 1,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        reasoningTokens: 0,
      },
      costMicroUsd: 10,
      finishReason: "stop",
    });
  const events = splitSseEvents(frames).map((event) => JSON.parse(event) as { type: string });
  assert.equal(events[0]!.type, "response.created");
  assert.equal(events.at(-1)!.type, "response.completed");
  assert.equal(events.length, frames.split("\nevent: ").length);
});
