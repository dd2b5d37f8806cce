import assert from "node:assert/strict";
import { test } from "node:test";
import { mapFinishReason } from "./map-finish-reason.js";

test("Gemini finish reasons → canonical", () => {
  const none = { hasToolCalls: false };
  const calls = { hasToolCalls: true };
  assert.equal(mapFinishReason("STOP", none), "stop");
  assert.equal(mapFinishReason("STOP", calls), "tool-calls");
  assert.equal(mapFinishReason("MAX_TOKENS", none), "length");
  assert.equal(mapFinishReason("MAX_TOKENS", calls), "length");
  for (const reason of [
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "MODEL_ARMOR",
  ]) {
    assert.equal(mapFinishReason(reason, none), "content-filter", reason);
  }
  // Tool-use failures are not filters and not clean stops.
  for (const reason of ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]) {
    assert.equal(mapFinishReason(reason, calls), "other", reason);
  }
  for (const reason of [
    "OTHER",
    "LANGUAGE",
    "FINISH_REASON_UNSPECIFIED",
    "NO_IMAGE",
    "SOMETHING_NEW",
    undefined,
  ]) {
    assert.equal(mapFinishReason(reason, none), "other", String(reason));
  }
});
