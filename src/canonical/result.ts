/** A complete (non-streamed) generation: the fold of a canonical stream. */
import type { OpaqueReasoningState } from "./request.js";
import type { CanonicalUsage, FinishReason } from "./stream.js";

export type ResultContent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; providerState?: OpaqueReasoningState }
  | {
      type: "tool-call";
      id: string;
      name: string;
      arguments: string;
      providerState?: OpaqueReasoningState;
    };

export interface CanonicalResult {
  upstreamId?: string;
  upstreamModel?: string;
  /** In generation order. */
  content: ResultContent[];
  finishReason: FinishReason;
  stopSequence?: string;
  rawFinishReason?: string;
  usage: CanonicalUsage;
}

export function createEmptyUsage(): CanonicalUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
}
