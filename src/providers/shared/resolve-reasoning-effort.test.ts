import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveReasoningEffort } from "./resolve-reasoning-effort.js";

test("an explicit effort wins; a thinking budget maps to the nearest effort", () => {
  assert.equal(resolveReasoningEffort({ effort: "xhigh", budgetTokens: 1024 }), "xhigh");
  assert.equal(resolveReasoningEffort({ enabled: true, budgetTokens: 1024 }), "low");
  assert.equal(resolveReasoningEffort({ enabled: true, budgetTokens: 8192 }), "medium");
  assert.equal(resolveReasoningEffort({ enabled: true, budgetTokens: 32_000 }), "high");
  assert.equal(resolveReasoningEffort({ enabled: true }), undefined);
  assert.equal(resolveReasoningEffort(undefined), undefined);
});
