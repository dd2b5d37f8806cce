/**
 * Canonical stream parts. Adapters yield them; encoders render them. Lifecycles are fixed:
 * `text-start → text-delta* → text-end`, `reasoning-start → reasoning-delta* → reasoning-end`,
 * `tool-input-start → tool-input-delta* → tool-input-end → tool-call`, then `usage` and `finish`.
 * `usage` is cumulative and may also come earlier (what the upstream reported so far, e.g. the
 * prompt's count with the first content): the last one before `finish` is the final usage, and a
 * stream that ends early is billed from the last one it had (engine/meter-usage.ts).
 *
 * Server tools add three parts: `server-tool-call` when the model called one (between blocks, never
 * inside one), `server-tool-result` once it ran (before the next round's first part), and
 * `citation` for a span of a text block that cites a source, after the delta that completed the
 * span and before that block's `text-end`. The engine's tool loop makes them for the tools the
 * gateway runs; an adapter makes them only for the tools its provider ran itself
 * (`request.nativeServerTools`), with the provider's record of the call in `providerState`, which
 * the loop keeps for the next call and never passes on. A run with several rounds yields one
 * `usage` (summed over the rounds) and one `finish`, at the end.
 */
import type { OpaqueReasoningState, ResponsesCallShape } from "./request.js";
import type { ServerToolCall, ServerToolResult, UrlCitation } from "./server-tool.js";

export type FinishReason =
  | "stop"
  | "stop-sequence"
  | "length"
  | "tool-calls"
  | "content-filter"
  | "refusal"
  | "pause"
  | "context-window"
  | "error"
  | "other";

export interface CanonicalUsage {
  /** All prompt tokens, cached ones included (OpenAI convention). */
  inputTokens: number;
  /** All generated tokens, reasoning included. */
  outputTokens: number;
  /** Prompt tokens served from cache (subset of inputTokens). */
  cachedInputTokens: number;
  /** Prompt tokens written to cache with the default (5-minute) TTL (subset of inputTokens). */
  cacheWriteTokens: number;
  /** Prompt tokens written to cache with a 1-hour TTL (subset of inputTokens). */
  cacheWrite1hTokens: number;
  /** Reasoning tokens (subset of outputTokens). */
  reasoningTokens: number;
}

/**
 * An `error` part's error. Inside the gateway it is the GatewayError itself (errors/, which fits
 * this shape), passed from the adapter to the writer unchanged; `readStreamError` rebuilds one
 * only from plain info made elsewhere.
 */
export interface UpstreamErrorInfo {
  code: string;
  message: string;
  param?: string | null;
  retryAfterSeconds?: number;
  upstreamStatus?: number;
}

export type CanonicalStreamPart =
  | { type: "response-metadata"; upstreamId?: string; upstreamModel?: string }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string; providerState?: OpaqueReasoningState }
  /**
   * `index` is the position of the call among this turn's tool calls (0, 1, …). `custom` and
   * `namespace` (request.ts `ResponsesCallShape`) are set on the start and on the `tool-call`; the
   * deltas of a custom call are pieces of its `{"input": <text>}` arguments like any other.
   */
  | ({ type: "tool-input-start"; id: string; index: number; name: string } & ResponsesCallShape)
  | { type: "tool-input-delta"; id: string; delta: string }
  | { type: "tool-input-end"; id: string }
  | ({
      type: "tool-call";
      id: string;
      index: number;
      name: string;
      arguments: string;
      providerState?: OpaqueReasoningState;
    } & ResponsesCallShape)
  | { type: "server-tool-call"; call: ServerToolCall; providerState?: OpaqueReasoningState }
  | { type: "server-tool-result"; result: ServerToolResult; providerState?: OpaqueReasoningState }
  | { type: "citation"; id: string; citation: UrlCitation }
  | { type: "usage"; usage: CanonicalUsage }
  | { type: "finish"; reason: FinishReason; stopSequence?: string; rawReason?: string }
  | { type: "error"; error: UpstreamErrorInfo };
