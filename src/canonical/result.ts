/** A complete (non-streamed) generation: the fold of a canonical stream. */
import type { OpaqueReasoningState } from "./request.js";
import type { ServerToolCall, ServerToolResult, UrlCitation } from "./server-tool.js";
import type { CanonicalUsage, FinishReason } from "./stream.js";

export type ResultContent =
  /** `citations`: spans of this text that cite a server tool's sources (absent when none). */
  | { type: "text"; text: string; citations?: UrlCitation[] }
  | { type: "reasoning"; text: string; providerState?: OpaqueReasoningState }
  | {
      type: "tool-call";
      id: string;
      name: string;
      arguments: string;
      providerState?: OpaqueReasoningState;
    }
  /**
   * A server tool the model called, and its result, where they happened between the blocks.
   * `providerState`: the provider's own record, when the provider ran the tool (see stream.ts).
   */
  | { type: "server-tool-call"; call: ServerToolCall; providerState?: OpaqueReasoningState }
  | { type: "server-tool-result"; result: ServerToolResult; providerState?: OpaqueReasoningState };

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
