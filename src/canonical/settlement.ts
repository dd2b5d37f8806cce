import type { CanonicalUsage, FinishReason } from "./index.js";

/** What a finished generation is billed: the engine computes it, every ingress format encodes it. */
export interface Settlement {
  usage: CanonicalUsage;
  costMicroUsd: number;
  finishReason: FinishReason;
}
