import assert from "node:assert/strict";
import { test } from "node:test";
import { selectHeadDeadlineMs } from "./select-head-deadline.js";

const timeouts = { connectMs: 10_000, firstByteMs: 15_000, responseMs: 120_000, idleMs: 120_000 };

test("a streamed call with another route waiting gives up at the first-byte deadline", () => {
  assert.equal(selectHeadDeadlineMs(timeouts, { stream: true, anotherRouteWaits: true }), 15_000);
});

test("the last route, and any non-streamed call, wait the response deadline", () => {
  assert.equal(selectHeadDeadlineMs(timeouts, { stream: true, anotherRouteWaits: false }), 120_000);
  assert.equal(selectHeadDeadlineMs(timeouts, { stream: false, anotherRouteWaits: true }), 120_000);
  assert.equal(selectHeadDeadlineMs(timeouts, { stream: false, anotherRouteWaits: false }), 120_000);
});
