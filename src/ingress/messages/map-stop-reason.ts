/**
 * Canonical finish reason → messages `stop_reason`. One table, so the non-streaming response and
 * the stream cannot disagree.
 */
import type { FinishReason } from "../../canonical/index.js";

export type MessagesStopReason =
  | "end_turn"
  | "stop_sequence"
  | "max_tokens"
  | "tool_use"
  | "refusal"
  | "pause_turn"
  | "model_context_window_exceeded";

export const MESSAGES_STOP_REASONS: Readonly<Record<FinishReason, MessagesStopReason>> = {
  stop: "end_turn",
  "stop-sequence": "stop_sequence",
  length: "max_tokens",
  "context-window": "model_context_window_exceeded",
  // Agent loops (Claude Code) continue only on tool_use; anything else ends them.
  "tool-calls": "tool_use",
  refusal: "refusal",
  // The format's only safety stop; a filtered answer must not look like a clean end_turn.
  "content-filter": "refusal",
  pause: "pause_turn",
  // An error that ended the stream is reported by the `error` event itself; what the turn produced
  // so far ended without a more specific reason.
  error: "end_turn",
  other: "end_turn",
};

export function mapStopReason(reason: FinishReason): MessagesStopReason {
  return MESSAGES_STOP_REASONS[reason] ?? "end_turn";
}
