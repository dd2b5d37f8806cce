import assert from "node:assert/strict";
import { test } from "node:test";
import { type CanonicalUsage, createEmptyUsage } from "../canonical/index.js";
import { DeliveredOutput, KEPT_CHARACTERS_PER_CAP_TOKEN, meterUsage } from "./meter-usage.js";

const usage = (overrides: Partial<CanonicalUsage>): CanonicalUsage => ({
  ...createEmptyUsage(),
  ...overrides,
});
const meter = (reported: CanonicalUsage | undefined, finished: boolean, estimatedOutput = 30) =>
  meterUsage({
    reported,
    finished,
    estimateInputTokens: () => 100,
    estimateOutputTokens: () => estimatedOutput,
    outputCap: 500,
  });

test("a finished generation is billed its reported usage, cache classes included", () => {
  const reported = usage({
    inputTokens: 1_000,
    cachedInputTokens: 400,
    outputTokens: 200,
    reasoningTokens: 50,
  });
  assert.deepEqual(meter(reported, true), { usage: reported, estimated: false, capped: false });
});

test("no usage, or usage counting no token at all, is estimated: the admission's prompt and the delivered output", () => {
  for (const reported of [undefined, usage({})]) {
    assert.deepEqual(meter(reported, true), {
      usage: usage({ inputTokens: 100, outputTokens: 30 }),
      estimated: true,
      capped: false,
    });
  }
});

test("ended early: the reported prompt, and the larger of the reported and the delivered output", () => {
  // Anthropic's message_start: the prompt, and an output count of 1.
  assert.deepEqual(meter(usage({ inputTokens: 5_000, cachedInputTokens: 10, outputTokens: 1 }), false), {
    usage: usage({ inputTokens: 5_000, cachedInputTokens: 10, outputTokens: 30 }),
    estimated: true,
    capped: false,
  });
  // A final usage chunk that arrived before the end: nothing is estimated.
  assert.deepEqual(meter(usage({ inputTokens: 4_000, outputTokens: 300 }), false), {
    usage: usage({ inputTokens: 4_000, outputTokens: 300 }),
    estimated: false,
    capped: false,
  });
});

test("output is never billed past the cap, reported or estimated", () => {
  assert.deepEqual(meter(usage({ inputTokens: 20, outputTokens: 1_000_000, reasoningTokens: 900 }), true), {
    usage: usage({ inputTokens: 20, outputTokens: 500, reasoningTokens: 500 }),
    estimated: false,
    capped: true,
  });
  assert.equal(meter(undefined, false, 7_000_000).usage.outputTokens, 500);
});

test("a stream keeps only as much delivered text as an estimate up to its cap can use", () => {
  const output = new DeliveredOutput(10);
  assert.equal(output.produced, false);
  for (let index = 0; index < 1_000; index++) output.append("word ");
  assert.equal(output.produced, true);
  // 10 tokens × 8 characters: "word " × 16, 16 tokens at most.
  assert.ok(output.estimateTokens() <= (10 * KEPT_CHARACTERS_PER_CAP_TOKEN) / 5 + 1);
  assert.ok(output.estimateTokens() >= 10, "enough to reach the cap");
});
