import assert from "node:assert/strict";
import { test } from "node:test";
import { createToolCallIdRewriter, hashToAlphanumeric } from "./rewrite-tool-call-id.js";

test("alphanumeric-9: foreign ids become 9 [a-zA-Z0-9], deterministically and distinctly", () => {
  const rewrite = createToolCallIdRewriter("alphanumeric-9");
  const ids = ["call_ZR5UUuTt3pf61kjwAJIYdVMj", "toolu_0167cfEnoQaPviGdVXA95zcu", "call_1", "call_2", ""];
  const rewritten = ids.map(rewrite);
  for (const id of rewritten) assert.match(id, /^[A-Za-z0-9]{9}$/);
  assert.equal(new Set(rewritten).size, ids.length);
  // A second request of the same conversation maps every id the same way.
  assert.deepEqual(ids.map(createToolCallIdRewriter("alphanumeric-9")), rewritten);
});

test("alphanumeric-9: ids the host produced itself are kept", () => {
  const rewrite = createToolCallIdRewriter("alphanumeric-9");
  assert.equal(rewrite("D681PevKs"), "D681PevKs");
  assert.notEqual(rewrite("D681PevK"), "D681PevK");
  assert.notEqual(rewrite("D681Pev-s"), "D681Pev-s");
});

test("any: ids are untouched", () => {
  assert.equal(createToolCallIdRewriter("any")("call_abc"), "call_abc");
});

test("hashToAlphanumeric has the requested length", () => {
  assert.match(hashToAlphanumeric("x", 24), /^[A-Za-z0-9]{24}$/);
});
