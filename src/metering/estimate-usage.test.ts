import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../canonical/index.js";
import { estimateInputTokens, MAX_TOKENIZED_CHARACTERS, TokenCounter } from "./estimate-usage.js";

const HISTORY = [
  "Summarise the attached meeting notes in three bullet points, then list every action item with its owner.",
  "- Budget approved for Q3.\n- Hiring paused until October.\n- Launch moved to 14 November.\nActions: Ana (deck), Li (hiring plan).",
  "Now translate the action items into German and keep the owners' names unchanged, please.",
];

function conversation(turns: number): CanonicalRequest {
  return createTestRequest({
    system: [
      { type: "text", text: "You are a careful assistant for an operations team. Answer in plain text." },
    ],
    messages: HISTORY.slice(0, turns).map((text, index) => ({
      role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: [{ type: "text" as const, text }],
    })),
  });
}

test("input estimate: a conversation's repeated texts give the same count every turn", () => {
  const first = estimateInputTokens(conversation(3));
  assert.equal(estimateInputTokens(conversation(3)), first, "served from the cache, unchanged");
  // Each turn adds exactly its own text's count (plus separator and framing), whatever was cached.
  const growth = estimateInputTokens(conversation(3)) - estimateInputTokens(conversation(2));
  assert.equal(growth, countTokens(HISTORY[2]) + 1 + 4);
});

test("input estimate: counting texts one by one never undercounts the joined prompt", () => {
  const request = conversation(3);
  const joined = [request.system[0].text, ...HISTORY].join("\n");
  const estimate = estimateInputTokens(request);
  const framing = 4 * (request.messages.length + 1);
  assert.ok(estimate - framing >= countTokens(joined), `${estimate - framing} < ${countTokens(joined)}`);
  assert.ok(estimate - framing <= countTokens(joined) + 2 * 4, "and stays within a token or two per text");
});

test("token counter: a bound is never below the exact count, however long or broken the text", () => {
  const prose = "The quick brown fox jumps over the lazy dog, again and again. ".repeat(6_000);
  // The exact count merges a long piece in quadratic time: 1,200 letters are still quick.
  for (const text of [prose, `${"ACGT".repeat(300)} ${prose.slice(0, 10_000)}`, prose + prose]) {
    const bound = new TokenCounter().bound(text);
    assert.ok(bound >= countTokens(text), `${bound} < ${countTokens(text)}`);
    assert.ok(bound <= Buffer.byteLength(text), "and never above one token per byte");
  }
  // Too long to tokenize: its bytes, one token per byte being what merging starts from.
  const long = "y".repeat(MAX_TOKENIZED_CHARACTERS + 1);
  assert.equal(new TokenCounter().bound(long), long.length);
});

test("token counter: past the budget an estimate scales what was counted; a bound counts bytes", () => {
  const prose = "Quarterly figures, region by region, with a short comment on each. ".repeat(12_000);
  const exact = countTokens(prose);
  const estimate = new TokenCounter(20_000).estimate(prose);
  assert.ok(Math.abs(estimate - exact) / exact < 0.05, `estimate ${estimate}, exact ${exact}`);
  const bound = new TokenCounter(20_000).bound(prose);
  assert.ok(bound > exact && bound <= Buffer.byteLength(prose), `bound ${bound}`);
  // One budget for a request: the second text finds it spent.
  const counter = new TokenCounter(20_000);
  counter.estimate(prose);
  assert.ok(counter.bound("Short and new text, never seen before by the cache here.") >= 10);
});

test("token counter: megabytes of any shape are counted in milliseconds", () => {
  for (const text of ["y".repeat(9_000_000), "ACGT".repeat(500_000), "word ".repeat(400_000)]) {
    const started = performance.now();
    new TokenCounter().estimate(text);
    new TokenCounter().bound(text);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 500, `${elapsed.toFixed(0)} ms for ${text.length} characters`);
  }
});
