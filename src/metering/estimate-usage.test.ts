import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../canonical/index.js";
import { estimateInputTokens } from "./estimate-usage.js";

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
