import { type CanonicalUsage, createEmptyUsage } from "../../canonical/index.js";
import { readTokenCount } from "../shared/read-wire-values.js";
import type { ResponsesUsageWire } from "./wire-types.js";

/**
 * Responses `usage` → canonical. Same convention as canonical already: `input_tokens` includes
 * cached and cache-written tokens, `output_tokens` includes reasoning. Missing or null counters
 * are 0 (`cache_write_tokens` exists only in newer responses).
 */
export function mapResponsesUsage(usage: ResponsesUsageWire | null | undefined): CanonicalUsage {
  const result = createEmptyUsage();
  if (usage === null || usage === undefined) return result;
  result.inputTokens = readTokenCount(usage.input_tokens);
  result.outputTokens = readTokenCount(usage.output_tokens);
  result.cachedInputTokens = readTokenCount(usage.input_tokens_details?.cached_tokens);
  result.cacheWriteTokens = readTokenCount(usage.input_tokens_details?.cache_write_tokens);
  result.reasoningTokens = readTokenCount(usage.output_tokens_details?.reasoning_tokens);
  return result;
}
