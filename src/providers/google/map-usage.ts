/**
 * Gemini `usageMetadata` → canonical usage.
 *
 * Gemini counts differently from the canonical (OpenAI) convention:
 * - `candidatesTokenCount` EXCLUDES thoughts, so output = candidates + thoughts, and reasoning =
 *   thoughts (billing only candidates under-bills thinking models 2–4×);
 * - `toolUsePromptTokenCount` (grounding/search context) is prompt the model read, outside
 *   `promptTokenCount`, so input = prompt + tool-use prompt;
 * - `cachedContentTokenCount` is a subset of `promptTokenCount`.
 * With these, input + output = `totalTokenCount`. Gemini omits zero counters (no
 * `candidatesTokenCount` when nothing was generated): missing counts are 0.
 */
import { type CanonicalUsage, createEmptyUsage } from "../../canonical/index.js";
import { readTokenCount } from "../shared/read-wire-values.js";
import type { GeminiUsageWire } from "./wire-types.js";

export function mapUsage(usage: GeminiUsageWire | null | undefined): CanonicalUsage {
  const result = createEmptyUsage();
  if (usage === null || usage === undefined) return result;
  const thoughts = readTokenCount(usage.thoughtsTokenCount);
  result.inputTokens = readTokenCount(usage.promptTokenCount) + readTokenCount(usage.toolUsePromptTokenCount);
  result.outputTokens = readTokenCount(usage.candidatesTokenCount) + thoughts;
  result.cachedInputTokens = readTokenCount(usage.cachedContentTokenCount);
  result.reasoningTokens = thoughts;
  return result;
}
