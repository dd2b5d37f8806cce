import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { buildTurnBody, keepResponse } from "./previous-response-memory.js";
import type { ResponseCreateEvent } from "./read-client-event.js";

function create(fields: Record<string, unknown>, previousResponseId?: string): ResponseCreateEvent {
  return { type: "response.create", streamId: undefined, generate: true, previousResponseId, fields };
}

const answer = { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi." }] };

test("without previous_response_id the body is the message's fields, streamed; its input is kept as items", () => {
  const turn = buildTurnBody(create({ model: "m", input: "hello", stream: false }), 40, undefined, 1000);
  assert.equal(turn.body.stream, true);
  assert.equal(turn.body.input, "hello");
  assert.deepEqual(turn.items, [{ type: "message", role: "user", content: "hello" }]);
  assert.equal(turn.bytes, 40);
});

test("with the kept response's id, the history comes first, then the new input; nothing else is carried", () => {
  const first = buildTurnBody(create({ model: "m", instructions: "A", input: "one" }), 50, undefined, 1000);
  const kept = keepResponse("resp_1", first, [answer], 100, 1000);
  assert.ok(kept);
  assert.equal(kept.bytes, 150);
  const second = buildTurnBody(
    create({ model: "m", input: [{ role: "user", content: "two" }] }, "resp_1"),
    60,
    kept,
    1000,
  );
  assert.deepEqual(second.body.input, [
    { type: "message", role: "user", content: "one" },
    answer,
    { role: "user", content: "two" },
  ]);
  assert.equal(second.body.instructions, undefined, "instructions are the turn's own");
  assert.equal(second.bytes, 210);
  // An empty input continues as it is (a warmup's continuation).
  assert.deepEqual(buildTurnBody(create({ model: "m", input: [] }, "resp_1"), 30, kept, 1000).items, [
    { type: "message", role: "user", content: "one" },
    answer,
  ]);
});

test("any other id, or none kept, is refused naming previous_response_id", () => {
  const kept = keepResponse(
    "resp_1",
    buildTurnBody(create({ input: "x" }), 10, undefined, 1000),
    [],
    10,
    1000,
  );
  for (const [id, memory] of [
    ["resp_2", kept],
    ["resp_1", undefined],
  ] as const) {
    assert.throws(
      () => buildTurnBody(create({ input: "y" }, id), 10, memory, 1000),
      (error: unknown) =>
        error instanceof GatewayError &&
        error.code === "invalid_request" &&
        error.param === "previous_response_id" &&
        /not the last response of this WebSocket connection/.test(error.message),
    );
  }
  assert.throws(
    () => buildTurnBody(create({ input: 7 }, "resp_1"), 10, kept, 1000),
    (error: unknown) => error instanceof GatewayError && error.param === "input",
  );
});

test("the bound: a response over the body cap is not kept; a continuation over it is payload_too_large", () => {
  const turn = buildTurnBody(create({ input: "x" }), 600, undefined, 1000);
  assert.equal(keepResponse("resp_1", turn, [answer], 401, 1000), undefined);
  const kept = keepResponse("resp_1", turn, [answer], 400, 1000);
  assert.ok(kept);
  assert.throws(
    () => buildTurnBody(create({ input: "y" }, "resp_1"), 1, kept, 1000),
    (error: unknown) => error instanceof GatewayError && error.code === "payload_too_large",
  );
  assert.equal(buildTurnBody(create({ input: "y" }, "resp_1"), 0, kept, 1000).bytes, 1000);
});
