/**
 * A run's settlement, computed once when it ends (generation-run.ts): its usage metered, priced
 * with the tools' and documents' costs, the outcome written through the generation's billing
 * (generation-billing.ts), and the totals the encoders render.
 */

import { type CanonicalResult, createEmptyUsage } from "../canonical/index.js";
import type { CanonicalRequest } from "../canonical/request.js";
import type { Settlement } from "../canonical/settlement.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import type { AnswerKeeper } from "./answer-keeper.js";
import { createOutcome } from "./create-outcome.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";
import type { RunUsage } from "./run-usage.js";
import type { ToolLoop } from "./tool-loop.js";

/** How a run ended, as its settlement needs it. */
export interface RunEnd {
  admitted: AdmittedGeneration;
  /** The generation's billing (generation-billing.ts), given to the run. */
  billing: GenerationBilling;
  status: GenerationOutcome["status"];
  /** The error it ended with (`status` "error"). */
  error: GatewayError | undefined;
  /** An attempt served, or the client left while a call was in flight: the prompt was likely processed. */
  promptProcessed: boolean;
  usage: RunUsage;
  loop: ToolLoop | undefined;
  /** The tool loop's current round's request when it is not the first one's. */
  laterRoundRequest: CanonicalRequest | undefined;
  attempts: GenerationAttempt[];
  served: GenerationAttempt | undefined;
  /** A cached request's miss: stores the complete answer once settled (answer-keeper.ts). */
  keeper: AnswerKeeper | undefined;
  /** Non-streamed: the run's whole answer. */
  result: CanonicalResult | undefined;
}

export async function settleRun(end: RunEnd): Promise<Settlement> {
  const { admitted, billing, status, error, usage, loop } = end;
  // No charge for nothing: a failure before any output costs 0, and so does a caller that left
  // before any upstream was called or while the run waited between attempts. One that left
  // while a call was in flight is billed the prompt (the upstream likely processed it), at the
  // prices of the route it was waiting for.
  const produced = usage.produced || usage.completedUsage !== undefined;
  const metered =
    (status === "error" && !produced) || (status === "cancelled" && !end.promptProcessed)
      ? undefined
      : usage.meterRun(billing, status, end.laterRoundRequest, loop !== undefined);
  const total = metered?.usage ?? createEmptyUsage();
  // Reading the documents is billed with the prompt that carried their text, not without it.
  const documentMicroUsd = metered === undefined ? 0 : usage.documentMicroUsd;
  const toolMicroUsd = (loop?.toolCostMicroUsd ?? 0) + documentMicroUsd;
  const costMicroUsd = metered || toolMicroUsd > 0 ? billing.price(metered?.rounds ?? [], toolMicroUsd) : 0;
  const finishReason = usage.finishReason ?? null;
  const outcome = createOutcome(admitted, status, total, costMicroUsd, finishReason, usage.upstreamModel);
  outcome.usageEstimated = metered?.estimated === true;
  outcome.attempts = end.attempts;
  if (loop !== undefined) outcome.toolCostsMicroUsd = { ...loop.toolCosts };
  if (documentMicroUsd > 0) {
    const costs = outcome.toolCostsMicroUsd;
    costs.pdf = (costs.pdf ?? 0) + documentMicroUsd;
  }
  if (error && status === "error") outcome.errorCode = error.code;
  if (admitted.cache?.hit === true) outcome.cacheHit = true;
  await billing.settle(outcome, end.served, loop?.executed ?? []);
  void end.keeper?.store(status, usage.finishReason, end.result);
  const settlement: Settlement = {
    usage: total,
    costMicroUsd,
    finishReason: usage.finishReason ?? (error ? "error" : "stop"),
  };
  if (loop !== undefined) settlement.serverToolCalls = { ...loop.callCounts };
  return settlement;
}
