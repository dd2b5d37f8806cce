/** The usage record's outcome from what a run metered and priced (generation-run.ts settles with it). */
import type { CanonicalUsage, FinishReason } from "../canonical/index.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import type { GenerationOutcome } from "./generation-record.js";

export function createOutcome(
  admitted: AdmittedGeneration,
  status: GenerationOutcome["status"],
  usage: CanonicalUsage,
  costMicroUsd: number,
  finishReason: FinishReason | null,
  upstreamModel?: string,
): GenerationOutcome {
  return {
    status,
    errorCode: null,
    upstreamProvider: admitted.call.provider.id,
    upstreamModel: upstreamModel ?? admitted.call.upstreamModel,
    tokensPrompt: usage.inputTokens,
    tokensCompletion: usage.outputTokens,
    tokensReasoning: usage.reasoningTokens,
    tokensCachedPrompt: usage.cachedInputTokens,
    tokensCacheWrite: usage.cacheWriteTokens + usage.cacheWrite1hTokens,
    costMicroUsd,
    toolCostsMicroUsd: {},
    latencyMs: Math.round(performance.now() - admitted.startedAt),
    finishReason,
  };
}
