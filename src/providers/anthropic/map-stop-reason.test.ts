import assert from "node:assert/strict";
import { test } from "node:test";
import { mapStopReason } from "./map-stop-reason.js";

test("every Anthropic stop_reason keeps its own meaning", () => {
  const cases: Array<[string | null | undefined, string]> = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop-sequence"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "context-window"],
    ["tool_use", "tool-calls"],
    ["refusal", "refusal"],
    ["pause_turn", "pause"],
    ["something_new", "other"],
    [null, "other"],
    [undefined, "other"],
  ];
  for (const [raw, expected] of cases) assert.equal(mapStopReason(raw), expected, String(raw));
});

test("tool_use from the structured-output tool alone is a finished answer", () => {
  assert.equal(mapStopReason("tool_use", { onlyJsonResponseTool: true }), "stop");
  assert.equal(mapStopReason("tool_use", { onlyJsonResponseTool: false }), "tool-calls");
});
