/** A complete (non-streamed) generation: the fold of a canonical stream. */
import type { OpaqueReasoningState, ResponsesCallShape } from "./request.js";
import type { ServerToolCall, ServerToolResult, UrlCitation } from "./server-tool.js";
import type { CanonicalUsage, FinishReason } from "./stream.js";

export type ResultContent =
  /** `citations`: spans of this text that cite a server tool's sources (absent when none). */
  | { type: "text"; text: string; citations?: UrlCitation[] }
  | { type: "reasoning"; text: string; providerState?: OpaqueReasoningState }
  | ({
      type: "tool-call";
      id: string;
      name: string;
      arguments: string;
      providerState?: OpaqueReasoningState;
    } & ResponsesCallShape)
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

/** The Responses shape of a call (`custom`, `namespace`) for copying onto another part; {} when plain. */
export function pickCallShape(call: ResponsesCallShape): ResponsesCallShape {
  if (call.custom !== true && call.namespace === undefined) return {};
  return {
    ...(call.custom === true ? { custom: true as const } : {}),
    ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
  };
}

/**
 * A custom call's arguments: `{"input":"` + the input, escaped as JSON string content, + `"}`.
 * Streamed, the first delta starts with the prefix, each piece of input is escaped on its own
 * (JSON.stringify of a piece; a surrogate pair split between pieces becomes two `\u` escapes, which
 * decode to the same text) and the last delta is the suffix.
 */
export const CUSTOM_INPUT_PREFIX = '{"input":"';
export const CUSTOM_INPUT_SUFFIX = '"}';

export function escapeCustomInputPiece(piece: string): string {
  return JSON.stringify(piece).slice(1, -1);
}

export function encodeCustomCallArguments(input: string): string {
  return `{"input":${JSON.stringify(input)}}`;
}

/** The input text of a custom call's arguments; the arguments themselves when they are not that. */
export function readCustomCallInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as { input?: unknown }).input === "string"
    )
      return (parsed as { input: string }).input;
  } catch {
    // Not JSON: shown as it is.
  }
  return args;
}
