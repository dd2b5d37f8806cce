/**
 * Canonical usage + settled cost → the responses `usage` object, shared by the
 * non-streaming response and `response.completed`.
 */
import type { CanonicalUsage } from "../../canonical/index.js";

export interface ResponsesUsage {
  input_tokens: number;
  /** `cache_write_tokens` is always present: OpenAI's published `ResponseUsage` schema requires it. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Total cost in credits (USD), as in the chat format's usage; not part of OpenAI's object. */
  cost: number;
}

export function encodeResponsesUsage(usage: CanonicalUsage, costMicroUsd: number): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheWriteTokens + usage.cacheWrite1hTokens,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
    // Money is integer micro-USD internally; the wire carries credits (USD) as a number.
    cost: costMicroUsd / 1_000_000,
  };
}
