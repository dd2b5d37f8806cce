import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalStreamPart, OpaqueReasoningState } from "../../canonical/index.js";
import {
  appendToContentBlock,
  createContentBlock,
  createSequentialBlocks,
  endContentBlock,
  startContentBlock,
} from "./block-tracker.js";

const STATE: OpaqueReasoningState = { providerKind: "anthropic", upstreamModel: "m", signature: "sig" };

test("a block starts with its first non-empty delta; empty deltas write nothing", () => {
  const parts: CanonicalStreamPart[] = [];
  const block = createContentBlock("text", "text-0");
  appendToContentBlock(block, "", parts);
  assert.deepEqual(parts, []);
  appendToContentBlock(block, "Hel", parts);
  appendToContentBlock(block, "lo", parts);
  endContentBlock(block, parts);
  assert.deepEqual(parts, [
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Hel" },
    { type: "text-delta", id: "text-0", delta: "lo" },
    { type: "text-end", id: "text-0" },
  ]);
});

test("a block never started ends without parts: no phantom empty block", () => {
  const parts: CanonicalStreamPart[] = [];
  endContentBlock(createContentBlock("text", "t"), parts);
  endContentBlock(createContentBlock("reasoning", "r"), parts);
  assert.deepEqual(parts, []);
});

test("an empty reasoning block whose end carries provider state is started and ended", () => {
  const parts: CanonicalStreamPart[] = [];
  endContentBlock(createContentBlock("reasoning", "rs_1"), parts, STATE);
  assert.deepEqual(parts, [
    { type: "reasoning-start", id: "rs_1" },
    { type: "reasoning-end", id: "rs_1", providerState: STATE },
  ]);
});

test("starting twice writes one start part", () => {
  const parts: CanonicalStreamPart[] = [];
  const block = createContentBlock("reasoning", "r");
  startContentBlock(block, parts);
  startContentBlock(block, parts);
  endContentBlock(block, parts);
  assert.deepEqual(parts, [
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-end", id: "r" },
  ]);
});

test("sequential blocks never overlap, and ids count across both kinds", () => {
  const parts: CanonicalStreamPart[] = [];
  const blocks = createSequentialBlocks();
  blocks.appendReasoning(parts, "think");
  blocks.appendText(parts, "a");
  blocks.appendText(parts, "b");
  blocks.appendReasoning(parts, "more");
  blocks.appendText(parts, "");
  assert.equal(blocks.reasoningOpen, true);
  assert.equal(blocks.textOpen, false);
  blocks.closeText(parts);
  blocks.closeReasoning(parts);
  assert.deepEqual(parts, [
    { type: "reasoning-start", id: "reasoning-0" },
    { type: "reasoning-delta", id: "reasoning-0", delta: "think" },
    { type: "reasoning-end", id: "reasoning-0" },
    { type: "text-start", id: "text-1" },
    { type: "text-delta", id: "text-1", delta: "a" },
    { type: "text-delta", id: "text-1", delta: "b" },
    { type: "text-end", id: "text-1" },
    { type: "reasoning-start", id: "reasoning-2" },
    { type: "reasoning-delta", id: "reasoning-2", delta: "more" },
    { type: "reasoning-end", id: "reasoning-2" },
  ]);
});

test("sequential: what follows a text block's end goes right after it; an open reasoning block is kept", () => {
  const parts: CanonicalStreamPart[] = [];
  const blocks = createSequentialBlocks({
    afterTextEnd(after) {
      after.push({ type: "reasoning-start", id: "carrier" }, { type: "reasoning-end", id: "carrier" });
    },
  });
  blocks.appendText(parts, "x");
  blocks.openReasoning(parts);
  blocks.openReasoning(parts);
  blocks.closeReasoning(parts, STATE);
  blocks.closeReasoning(parts);
  assert.deepEqual(parts, [
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "x" },
    { type: "text-end", id: "text-0" },
    { type: "reasoning-start", id: "carrier" },
    { type: "reasoning-end", id: "carrier" },
    { type: "reasoning-start", id: "reasoning-1" },
    { type: "reasoning-end", id: "reasoning-1", providerState: STATE },
  ]);
});
