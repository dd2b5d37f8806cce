import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { abortExchange, createClientGoneSignal } from "./client-gone-signal.js";

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

test("every listener runs once when it fires, and a removed one never", () => {
  const outgoing = createOutgoing();
  const signal = createClientGoneSignal(outgoing as unknown as ServerResponse);
  const calls: string[] = [];
  const removed = () => calls.push("removed");
  signal.addEventListener("abort", () => calls.push("run"));
  signal.addEventListener("abort", removed);
  signal.addEventListener("abort", () =>
    calls.push(`writer saw ${String((signal.reason as Error).message)}`),
  );
  signal.removeEventListener("abort", removed);
  outgoing.emit("close");
  outgoing.emit("close");
  assert.deepEqual(calls, ["run", "writer saw Client connection prematurely closed."]);
});

test("abortExchange ends the request with the instance's reason; a response without a signal is left to its caller", () => {
  const outgoing = createOutgoing();
  const signal = createClientGoneSignal(outgoing as unknown as ServerResponse);
  let heard: unknown;
  signal.addEventListener("abort", () => {
    heard = signal.reason;
  });
  const reason = new GatewayError("provider_timeout", "The instance stopped this request");
  assert.equal(abortExchange(outgoing as unknown as ServerResponse, reason), true);
  assert.equal(signal.aborted, true);
  assert.equal(heard, reason);
  // The client leaving afterwards changes nothing.
  outgoing.emit("close");
  assert.equal(signal.reason, reason);
  assert.equal(abortExchange(createOutgoing() as unknown as ServerResponse, reason), false);
});
