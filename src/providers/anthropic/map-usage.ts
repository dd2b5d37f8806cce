import { type CanonicalUsage, createEmptyUsage } from "../../canonical/index.js";
import { readTokenCount } from "../shared/read-wire-values.js";
import type { AnthropicUsageWire } from "./wire-types.js";

/**
 * Anthropic `usage` → canonical.
 *
 * Anthropic's `input_tokens` is only the uncached remainder, so the canonical (OpenAI-convention)
 * input is `input + cache_read + cache_creation`, and each cache class is a subset of it. Cache
 * writes are split by TTL in `cache_creation`; the 1-hour bucket is priced differently, so it is
 * kept apart, and whatever is not 1-hour counts as 5-minute (also when the split is absent, as in
 * responses from before the split existed). The two write classes always add up to
 * `cache_creation_input_tokens`, so every token is billed exactly once even if a relay's split
 * disagrees with its total. `output_tokens` includes thinking; `thinking_tokens` is reported by
 * newer models only, else 0.
 */
export function mapUsage(usage: AnthropicUsageWire | null | undefined): CanonicalUsage {
  const result = createEmptyUsage();
  if (usage === null || usage === undefined) return result;
  const uncached = readTokenCount(usage.input_tokens);
  const cacheRead = readTokenCount(usage.cache_read_input_tokens);
  const split = usage.cache_creation ?? undefined;
  const fiveMinute = readTokenCount(split?.ephemeral_5m_input_tokens);
  const oneHourSplit = readTokenCount(split?.ephemeral_1h_input_tokens);
  const cacheCreation = isCount(usage.cache_creation_input_tokens)
    ? readTokenCount(usage.cache_creation_input_tokens)
    : fiveMinute + oneHourSplit;
  const oneHour = Math.min(oneHourSplit, cacheCreation);

  result.inputTokens = uncached + cacheRead + cacheCreation;
  result.cachedInputTokens = cacheRead;
  result.cacheWrite1hTokens = oneHour;
  result.cacheWriteTokens = cacheCreation - oneHour;
  result.outputTokens = readTokenCount(usage.output_tokens);
  result.reasoningTokens = Math.min(
    readTokenCount(usage.output_tokens_details?.thinking_tokens),
    result.outputTokens,
  );
  return result;
}

/**
 * Folds a `message_delta.usage` into the usage known so far. Delta counters are
 * cumulative totals, not increments: a present value replaces the earlier one, an absent or null
 * one keeps it (relays put final `input_tokens` only in the delta; Anthropic omits them there).
 * This is what ant-sdk's `MessageStream` does.
 */
export function mergeUsage(
  current: AnthropicUsageWire | undefined,
  update: AnthropicUsageWire | null | undefined,
): AnthropicUsageWire | undefined {
  if (update === null || update === undefined) return current;
  const merged: AnthropicUsageWire = { ...current };
  for (const key of [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
  ] as const) {
    if (isCount(update[key])) merged[key] = update[key];
  }
  if (update.cache_creation !== null && update.cache_creation !== undefined) {
    merged.cache_creation = { ...current?.cache_creation };
    for (const key of ["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"] as const) {
      if (isCount(update.cache_creation[key])) merged.cache_creation[key] = update.cache_creation[key];
    }
  }
  if (isCount(update.output_tokens_details?.thinking_tokens)) {
    merged.output_tokens_details = { thinking_tokens: update.output_tokens_details.thinking_tokens };
  }
  return merged;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
