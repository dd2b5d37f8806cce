/**
 * What records read back as before their row is written (the column defaults of migrations/0001
 * for an in-progress one), for the recorders that answer lookups from memory, the journal or
 * Redis; and how a record's start comes back from the JSON those keep.
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

/** JSON turned `createdAt` into a string; the rest is checked by the repository when written. */
export function decodeStart(start: Record<string, unknown>): GenerationStart {
  const { createdAt, ...rest } = start;
  const decoded = rest as unknown as GenerationStart;
  if (typeof createdAt === "string") decoded.createdAt = new Date(createdAt);
  return decoded;
}
