import assert from "node:assert/strict";
import { test } from "node:test";
import { isStateForUpstream } from "./is-state-for-upstream.js";

test("state reaches only its own provider kind and model", () => {
  const state = { providerKind: "google", upstreamModel: "gemini-a", signature: "s" };
  assert.equal(isStateForUpstream(state, "google", "gemini-a"), true);
  assert.equal(isStateForUpstream(state, "google", "gemini-b"), false);
  assert.equal(isStateForUpstream(state, "anthropic", "gemini-a"), false);
  assert.equal(isStateForUpstream({ ...state, upstreamModel: "" }, "google", "gemini-b"), true);
  assert.equal(isStateForUpstream(undefined, "google", "gemini-a"), false);
});
