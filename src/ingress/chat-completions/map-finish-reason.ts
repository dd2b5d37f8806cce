/**
 * Canonical finish reason → chat `finish_reason`. The chat vocabulary has only four values,
 * so several canonical reasons share one; the comments say why each lands where it does.
 */
import type { FinishReason } from "../../canonical/index.js";

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export const CHAT_FINISH_REASONS: Readonly<Record<FinishReason, ChatFinishReason>> = {
  stop: "stop",
  // OpenAI itself reports a matched stop sequence as `stop`.
  "stop-sequence": "stop",
  length: "length",
  // The output was cut by the context window rather than the cap: still a truncation to the client.
  "context-window": "length",
  "tool-calls": "tool_calls",
  "content-filter": "content_filter",
  // Anthropic's `refusal` is a safety stop; vercel/ai and most gateways map it to content_filter.
  refusal: "content_filter",
  // A server-tool pause that reaches the client ended the turn normally from its point of view.
  pause: "stop",
  // Errors that end a stream are reported by the error frame; the finish reason itself cannot
  // say "error" in this vocabulary, and `stop` is what clients handle without surprises.
  error: "stop",
  other: "stop",
};

export function mapFinishReason(reason: FinishReason): ChatFinishReason {
  return CHAT_FINISH_REASONS[reason] ?? "stop";
}
