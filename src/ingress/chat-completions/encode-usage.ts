/**
 * Canonical usage + settled cost → the chat `usage` object, shared by the non-streaming
 * response and the final stream chunk.
 */
import type { CanonicalUsage } from "../../canonical/index.js";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  completion_tokens_details: { reasoning_tokens: number };
  cost: number;
}

export function encodeChatUsage(usage: CanonicalUsage, costMicroUsd: number): ChatUsage {
  const promptDetails: ChatUsage["prompt_tokens_details"] = { cached_tokens: usage.cachedInputTokens };
  // Not in OpenAI's own responses, but OpenRouter reports it; omitted when 0 like the other extras.
  const cacheWriteTokens = usage.cacheWriteTokens + usage.cacheWrite1hTokens;
  if (cacheWriteTokens > 0) promptDetails.cache_write_tokens = cacheWriteTokens;
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    // Money is integer micro-USD internally; the wire carries credits (USD) as a number.
    cost: costMicroUsd / 1_000_000,
  };
}
