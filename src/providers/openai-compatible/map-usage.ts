import { type CanonicalUsage, createEmptyUsage } from "../../canonical/index.js";
import type { ChatUsageWire } from "./wire-types.js";

/**
 * Chat `usage` → canonical. Chat follows the canonical convention already: `prompt_tokens`
 * includes cached and cache-written tokens, `completion_tokens` includes reasoning. Missing or
 * null counters are 0 (2024 responses lack the details objects).
 */
export function mapUsage(usage: ChatUsageWire | null | undefined): CanonicalUsage {
  const result = createEmptyUsage();
  if (usage === null || usage === undefined) return result;
  result.inputTokens = readCount(usage.prompt_tokens);
  result.outputTokens = readCount(usage.completion_tokens);
  result.cachedInputTokens = readCount(usage.prompt_tokens_details?.cached_tokens);
  result.cacheWriteTokens = readCount(usage.prompt_tokens_details?.cache_write_tokens);
  result.reasoningTokens = readCount(usage.completion_tokens_details?.reasoning_tokens);
  return result;
}

function readCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
