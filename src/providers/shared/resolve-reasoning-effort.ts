/**
 * The effort level for upstreams that take an effort rather than a token budget (OpenAI and
 * compatible hosts). A messages-format caller expresses thinking as a budget; we map it to the
 * nearest effort so the request still means what the caller asked. Thresholds mirror the Anthropic
 * adapter's effort → budget table (low 2048, medium 8192, high 24576).
 */
import type { ReasoningEffort, ReasoningOptions } from "../../canonical/index.js";

export function resolveReasoningEffort(reasoning: ReasoningOptions | undefined): ReasoningEffort | undefined {
  if (reasoning === undefined) return undefined;
  if (reasoning.effort !== undefined) return reasoning.effort;
  if (reasoning.budgetTokens !== undefined) {
    if (reasoning.budgetTokens <= 2048) return "low";
    if (reasoning.budgetTokens <= 8192) return "medium";
    return "high";
  }
  return undefined;
}
