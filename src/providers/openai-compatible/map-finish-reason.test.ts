import assert from "node:assert/strict";
import { test } from "node:test";
import { mapFinishReason } from "./map-finish-reason.js";

const plain = { hasToolCalls: false, hasRefusal: false };

test("known Chat finish reasons", () => {
  assert.equal(mapFinishReason("stop", plain), "stop");
  assert.equal(mapFinishReason("length", plain), "length");
  assert.equal(mapFinishReason("tool_calls", plain), "tool-calls");
  assert.equal(mapFinishReason("function_call", plain), "tool-calls");
  assert.equal(mapFinishReason("content_filter", plain), "content-filter");
});

test("unknown or missing reasons are 'other', never a clean stop", () => {
  assert.equal(mapFinishReason("pause_turn", plain), "other");
  assert.equal(mapFinishReason("MALFORMED_FUNCTION_CALL", plain), "other");
  assert.equal(mapFinishReason(undefined, plain), "other");
  assert.equal(mapFinishReason(null, plain), "other");
});

test("'stop' after tool calls is a tool-call finish; after a refusal it is a refusal", () => {
  assert.equal(mapFinishReason("stop", { hasToolCalls: true, hasRefusal: false }), "tool-calls");
  assert.equal(mapFinishReason("stop", { hasToolCalls: false, hasRefusal: true }), "refusal");
  assert.equal(mapFinishReason("length", { hasToolCalls: true, hasRefusal: false }), "length");
});
