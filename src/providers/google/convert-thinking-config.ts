/**
 * Canonical reasoning options → Gemini `generationConfig.thinkingConfig`
 * (https://ai.google.dev/gemini-api/docs/thinking).
 *
 * Only for catalog models with the `reasoning` feature: a non-thinking model (2.0 Flash) answers a
 * thinkingConfig with 400. Thought summaries are always asked for (`includeThoughts`) unless the
 * caller turned reasoning off, so reasoning reaches every ingress format.
 *
 * - An explicit budget (messages-format `thinking.budget_tokens`) goes as `thinkingBudget`, which
 *   every thinking generation accepts (Gemini 3 "for backwards compatibility").
 * - An effort goes as `thinkingLevel` on Gemini 3+ and as a budget on 2.5 and unknown ids. Level
 *   support differs per model (3 Pro: low/high; 3 Flash: minimal…high; "Thinking level MEDIUM is not
 *   supported for this model" is a 400), so only the levels every Gemini 3 model accepts are sent:
 *   none/minimal/low → low, medium → no level (the model's own default), high/xhigh/max → high.
 *   Gemini 3 cannot switch thinking off, hence none → low.
 * - Budgets for 2.5 (Pro 128–32768, Flash 0–24576, Flash-Lite 512–24576): none → 0 (128 on Pro,
 *   which rejects 0), minimal 512, low 1024, medium 8192, high/xhigh/max 24576 — every value is inside
 *   every 2.5 model's range.
 * - No reasoning options: only `includeThoughts`; the model thinks as it does by default.
 */
import type { ReasoningEffort, ReasoningOptions } from "../../canonical/index.js";
import { isGemini3OrLater, isProModel } from "./read-model-generation.js";
import type { GeminiThinkingConfig } from "./wire-types.js";

const BUDGET_BY_EFFORT: Record<Exclude<ReasoningEffort, "none">, number> = {
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24_576,
  xhigh: 24_576,
  max: 24_576,
};

const LEVEL_BY_EFFORT: Record<ReasoningEffort, GeminiThinkingConfig["thinkingLevel"] | undefined> = {
  none: "low",
  minimal: "low",
  low: "low",
  medium: undefined,
  high: "high",
  xhigh: "high",
  max: "high",
};

/** The smallest budget 2.5 Pro accepts; it cannot think less. */
const PRO_MINIMUM_BUDGET = 128;

export function convertThinkingConfig(
  reasoning: ReasoningOptions | undefined,
  options: { upstreamModel: string; supportsReasoning: boolean },
): GeminiThinkingConfig | undefined {
  if (!options.supportsReasoning) return undefined;
  const disabled = reasoning?.enabled === false || reasoning?.effort === "none";
  const config: GeminiThinkingConfig = disabled ? {} : { includeThoughts: true };

  if (!disabled && reasoning?.budgetTokens !== undefined) {
    config.thinkingBudget = reasoning.budgetTokens;
    return config;
  }
  const effort = disabled ? "none" : reasoning?.effort;
  if (effort === undefined) return config;

  if (isGemini3OrLater(options.upstreamModel)) {
    const level = LEVEL_BY_EFFORT[effort];
    if (level !== undefined) config.thinkingLevel = level;
  } else if (effort === "none") {
    config.thinkingBudget = isProModel(options.upstreamModel) ? PRO_MINIMUM_BUDGET : 0;
  } else {
    config.thinkingBudget = BUDGET_BY_EFFORT[effort];
  }
  return Object.keys(config).length > 0 ? config : undefined;
}
