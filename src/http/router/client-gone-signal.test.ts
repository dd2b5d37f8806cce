import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { createClientGoneSignal } from "./client-gone-signal.js";

function createOutgoing(state: { writableFinished?: boolean; destroyed?: boolean } = {}) {
  return Object.assign(new EventEmitter(), { writableFinished: false, destroyed: false, ...state });
}

test("aborts when the response closes before it finished (the client left)", () => {
  const outgoing = createOutgoing();
  const signal = createClientGoneSignal(outgoing as unknown as ServerResponse);
  assert.equal(signal.aborted, false);
  outgoing.emit("close");
  assert.equal(signal.aborted, true);
});

test("stays quiet when the response closes after it finished", () => {
  const outgoing = createOutgoing();
  const signal = createClientGoneSignal(outgoing as unknown as ServerResponse);
  outgoing.writableFinished = true;
  outgoing.emit("close");
  assert.equal(signal.aborted, false);
});

test("is aborted at once when the response is already gone", () => {
  const outgoing = createOutgoing({ destroyed: true });
  assert.equal(createClientGoneSignal(outgoing as unknown as ServerResponse).aborted, true);
});
