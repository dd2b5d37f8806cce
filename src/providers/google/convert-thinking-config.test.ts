import assert from "node:assert/strict";
import { test } from "node:test";
import type { ReasoningOptions } from "../../canonical/index.js";
import { convertThinkingConfig } from "./convert-thinking-config.js";
import { isGemini3OrLater, isProModel, readGeminiGeneration } from "./read-model-generation.js";

const thinking = (reasoning: ReasoningOptions | undefined, upstreamModel: string) =>
  convertThinkingConfig(reasoning, { upstreamModel, supportsReasoning: true });

test("model generation is read from the id; unknown ids are not 3+", () => {
  assert.equal(readGeminiGeneration("gemini-2.5-flash"), 2);
  assert.equal(readGeminiGeneration("gemini-3-pro-preview"), 3);
  assert.equal(readGeminiGeneration("gemini-3.1-pro-preview"), 3);
  assert.equal(readGeminiGeneration("models/gemini-3-flash-preview"), 3);
  assert.equal(readGeminiGeneration("gemini-flash-latest"), undefined);
  assert.equal(readGeminiGeneration("tunedModels/x"), undefined);
  assert.equal(isGemini3OrLater("gemini-2.0-flash"), false);
  assert.equal(isGemini3OrLater("gemini-3-flash-preview"), true);
  assert.equal(isProModel("gemini-2.5-pro"), true);
  assert.equal(isProModel("gemini-2.5-pro-preview-06-05"), true);
  assert.equal(isProModel("gemini-2.5-flash"), false);
});

test("no thinkingConfig for a model without the reasoning feature", () => {
  assert.equal(
    convertThinkingConfig(
      { effort: "high" },
      { upstreamModel: "gemini-2.0-flash", supportsReasoning: false },
    ),
    undefined,
  );
});

test("no reasoning options: thought summaries only, the model's own default budget", () => {
  assert.deepEqual(thinking(undefined, "gemini-2.5-flash"), { includeThoughts: true });
  assert.deepEqual(thinking({}, "gemini-3-pro-preview"), { includeThoughts: true });
});

test("an explicit budget goes as thinkingBudget on every generation", () => {
  assert.deepEqual(thinking({ budgetTokens: 2048 }, "gemini-2.5-flash"), {
    includeThoughts: true,
    thinkingBudget: 2048,
  });
  assert.deepEqual(thinking({ budgetTokens: 2048, effort: "low" }, "gemini-3-pro-preview"), {
    includeThoughts: true,
    thinkingBudget: 2048,
  });
});

test("effort on 2.5 and unknown ids → budget table", () => {
  const budgets = Object.fromEntries(
    (["minimal", "low", "medium", "high", "xhigh", "max"] as const).map((effort) => [
      effort,
      thinking({ effort }, "gemini-2.5-flash")?.thinkingBudget,
    ]),
  );
  assert.deepEqual(budgets, {
    minimal: 512,
    low: 1024,
    medium: 8192,
    high: 24_576,
    xhigh: 24_576,
    max: 24_576,
  });
  assert.deepEqual(thinking({ effort: "low" }, "gemini-flash-latest"), {
    includeThoughts: true,
    thinkingBudget: 1024,
  });
});

test("effort on Gemini 3 → only the levels every Gemini 3 model accepts", () => {
  const levels = Object.fromEntries(
    (["minimal", "low", "medium", "high", "xhigh", "max"] as const).map((effort) => [
      effort,
      thinking({ effort }, "gemini-3-pro-preview"),
    ]),
  );
  assert.deepEqual(levels, {
    minimal: { includeThoughts: true, thinkingLevel: "low" },
    low: { includeThoughts: true, thinkingLevel: "low" },
    // MEDIUM is a 400 on 3 Pro: medium leaves the level to the model's default.
    medium: { includeThoughts: true },
    high: { includeThoughts: true, thinkingLevel: "high" },
    xhigh: { includeThoughts: true, thinkingLevel: "high" },
    max: { includeThoughts: true, thinkingLevel: "high" },
  });
});

test("reasoning off: budget 0 where allowed, the minimum where not, no thought summaries", () => {
  assert.deepEqual(thinking({ effort: "none" }, "gemini-2.5-flash"), { thinkingBudget: 0 });
  assert.deepEqual(thinking({ enabled: false }, "gemini-2.5-flash-lite"), { thinkingBudget: 0 });
  assert.deepEqual(thinking({ enabled: false, budgetTokens: 4000 }, "gemini-2.5-flash"), {
    thinkingBudget: 0,
  });
  assert.deepEqual(thinking({ effort: "none" }, "gemini-2.5-pro"), { thinkingBudget: 128 });
  // Gemini 3 cannot switch thinking off.
  assert.deepEqual(thinking({ effort: "none" }, "gemini-3-flash-preview"), { thinkingLevel: "low" });
});
