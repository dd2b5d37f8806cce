import assert from "node:assert/strict";
import { test } from "node:test";
import { unwrapOpaqueState, wrapOpaqueState } from "./opaque-state.js";

test("wrapped state round-trips byte-identical", () => {
  const signature = "EqQBCkYIBxgCKkA+/=\u00e9\u{1F600}";
  const state = { providerKind: "anthropic", upstreamModel: "claude-x", signature };
  const text = wrapOpaqueState(state);
  assert.match(text, /^hi1\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(unwrapOpaqueState(text, "openai-responses", "encryptedContent"), state);
});

test("a native string is attributed to the format's provider with an unknown model", () => {
  assert.deepEqual(unwrapOpaqueState("gAAAAB-native", "openai-responses", "encryptedContent"), {
    providerKind: "openai-responses",
    upstreamModel: "",
    encryptedContent: "gAAAAB-native",
  });
  assert.deepEqual(unwrapOpaqueState("hi1.%%%", "anthropic", "signature"), {
    providerKind: "anthropic",
    upstreamModel: "",
    signature: "hi1.%%%",
  });
});
