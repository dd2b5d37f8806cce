import type { FinishReason } from "../../canonical/index.js";

/**
 * Chat `finish_reason` → canonical. Unknown values become `other` (never `stop`: a silent clean
 * stop hides truncations and pending tool calls). Some compatible servers
 * report `stop` for a turn that ended in tool calls; agent loops only continue on a tool-call
 * finish, so `hasToolCalls` upgrades it.
 */
export function mapFinishReason(
  rawReason: string | null | undefined,
  context: { hasToolCalls: boolean; hasRefusal: boolean },
): FinishReason {
  switch (rawReason) {
    case "stop":
      if (context.hasToolCalls) return "tool-calls";
      return context.hasRefusal ? "refusal" : "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool-calls";
    case "content_filter":
      return "content-filter";
    default:
      return "other";
  }
}
