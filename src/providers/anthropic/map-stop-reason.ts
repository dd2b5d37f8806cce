import type { FinishReason } from "../../canonical/index.js";

/**
 * Anthropic `stop_reason` → canonical. Each value keeps its own meaning: `refusal` is not a content
 * filter, `pause_turn` is not a
 * clean stop (the turn must be resent to continue), and `model_context_window_exceeded` is not an
 * ordinary output cap. An unknown or missing value becomes `other`, never `stop`: a silent clean
 * stop hides truncations and pending tool calls. The raw value travels along as `rawReason`.
 *
 * `onlyJsonResponseTool`: the turn's only tool_use was the gateway's structured-output tool (see
 * `convert-tools.ts`), whose input is the answer text, so `tool_use` means a finished answer.
 */
export function mapStopReason(
  stopReason: string | null | undefined,
  context: { onlyJsonResponseTool: boolean } = { onlyJsonResponseTool: false },
): FinishReason {
  switch (stopReason) {
    case "end_turn":
      return "stop";
    case "stop_sequence":
      return "stop-sequence";
    case "max_tokens":
      return "length";
    case "model_context_window_exceeded":
      return "context-window";
    case "tool_use":
      return context.onlyJsonResponseTool ? "stop" : "tool-calls";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause";
    default:
      return "other";
  }
}
