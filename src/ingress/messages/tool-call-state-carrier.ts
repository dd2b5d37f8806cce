/**
 * Provider state that belongs to a tool call (Gemini thought signatures ride on function calls)
 * has no slot on a `tool_use` block. It travels in a carrier: a signature-only `thinking` block
 * (`thinking: ""`, the shape Anthropic itself sends with display omitted, so every client keeps
 * and replays it) right after the tool_use, whose wrapped state names the call in `toolCallId`.
 * On decode the carrier's state goes back onto the tool call and the carrier disappears, so the
 * canonical turn is exactly the one the upstream produced. Position does not matter on decode,
 * only the id; a carrier whose call is not in the same turn is dropped (state for nothing).
 */
import type { AssistantContentPart, OpaqueReasoningState } from "../../canonical/index.js";

/** The carrier's state: the call's state plus the call id. */
export function createCarrierState(state: OpaqueReasoningState, toolCallId: string): OpaqueReasoningState {
  const carried = { ...state };
  carried.toolCallId = toolCallId;
  return carried;
}

/** Moves carrier states onto their tool calls and removes the carriers. */
export function attachToolCallStates(content: AssistantContentPart[]): AssistantContentPart[] {
  if (!content.some((part) => part.type === "reasoning" && part.providerState?.toolCallId !== undefined)) {
    return content;
  }
  const calls = new Map<string, Extract<AssistantContentPart, { type: "tool-call" }>>();
  for (const part of content) if (part.type === "tool-call") calls.set(part.id, part);
  return content.filter((part) => {
    if (part.type !== "reasoning" || part.providerState?.toolCallId === undefined) return true;
    const { toolCallId, ...state } = part.providerState;
    const call = calls.get(toolCallId);
    if (call !== undefined) call.providerState = state;
    return false;
  });
}
