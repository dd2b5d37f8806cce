/**
 * What an in-progress row reads back as (the column defaults of migrations/0001), for repositories
 * that answer lookups of records they have not written yet.
 */
import type { GenerationOutcome, GenerationRecord, GenerationStart } from "../../engine/generation-record.js";

export function toInProgressRecord(start: GenerationStart, submittedAt: Date): GenerationRecord {
  return {
    status: "in_progress",
    ...start,
    errorCode: null,
    upstreamProvider: null,
    upstreamModel: null,
    tokensPrompt: 0,
    tokensCompletion: 0,
    tokensReasoning: 0,
    tokensCachedPrompt: 0,
    tokensCacheWrite: 0,
    costMicroUsd: 0,
    toolCostsMicroUsd: {},
    finishReason: null,
    usageEstimated: false,
    createdAt: start.createdAt ?? submittedAt,
    finishedAt: null,
  };
}

/** What a final row reads back as, for records whose final row is not written yet. */
export function toFinalRecord(
  start: GenerationStart,
  outcome: GenerationOutcome,
  finishedAt: Date,
): GenerationRecord {
  return {
    finishedAt,
    ...start,
    ...outcome,
    toolCostsMicroUsd: { ...outcome.toolCostsMicroUsd },
    usageEstimated: outcome.usageEstimated === true,
    createdAt: start.createdAt ?? finishedAt,
  };
}
