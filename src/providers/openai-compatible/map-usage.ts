import { type CanonicalUsage, createEmptyUsage } from "../../canonical/index.js";
import { readTokenCount } from "../shared/read-wire-values.js";
import type { ChatUsageWire } from "./wire-types.js";

/**
 * Chat `usage` → canonical. Chat follows the canonical convention already: `prompt_tokens`
 * includes cached and cache-written tokens, `completion_tokens` includes reasoning. Missing or
 * null counters are 0 (2024 responses lack the details objects).
 */
export function mapUsage(usage: ChatUsageWire | null | undefined): CanonicalUsage {
  const result = createEmptyUsage();
  if (usage === null || usage === undefined) return result;
  result.inputTokens = readTokenCount(usage.prompt_tokens);
  result.outputTokens = readTokenCount(usage.completion_tokens);
  result.cachedInputTokens = readTokenCount(usage.prompt_tokens_details?.cached_tokens);
  result.cacheWriteTokens = readTokenCount(usage.prompt_tokens_details?.cache_write_tokens);
  result.reasoningTokens = readTokenCount(usage.completion_tokens_details?.reasoning_tokens);
  return result;
}
