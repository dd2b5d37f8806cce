/**
 * `reasoning_details`: how the chat-completions format carries opaque provider reasoning state
 * (Anthropic thinking signatures and redacted thinking, OpenAI Responses encrypted content, Gemini
 * thought signatures) to the client and back. Chat Completions has no standard field for it, so the
 * gateway defines one, close to OpenRouter's, on the assistant message:
 *
 * ```
 * reasoning_details: [{
 *   type: "reasoning.text" | "reasoning.encrypted",   // "text" when `text` is non-empty
 *   provider_kind?: string,     // provider kind that produced the state, e.g. "anthropic"
 *   upstream_model?: string,    // upstream model id; state is only replayed to the same model
 *   text?: string,              // reasoning text of the block (the signature is bound to it)
 *   signature?: string,         // thinking / thought signature
 *   data?: string,              // redacted thinking payload
 *   encrypted_content?: string, // OpenAI Responses reasoning item content
 *   item_id?: string,           // OpenAI Responses reasoning item id
 *   tool_call_id?: string,      // set when the state belongs to that tool call (Gemini signatures)
 * }]
 * ```
 *
 * When the gateway emits `reasoning_details`, the array lists every reasoning block of the turn in
 * order (blocks without state carry only `text`), so it alone reproduces the turn's reasoning; on
 * decode it therefore takes precedence over the plain `reasoning` string. `reasoning.summary`
 * entries with a `summary` string (OpenRouter's shape) are accepted as text for compatibility.
 * Entries without `provider_kind` and `upstream_model` keep their text but lose their state: state of
 * unknown origin cannot be routed safely.
 */
import { z } from "zod";
import type { OpaqueReasoningState, ReasoningPart, ResultContent } from "../../canonical/index.js";

export const reasoningDetailSchema = z
  .object({
    type: z.enum(["reasoning.text", "reasoning.encrypted", "reasoning.summary"]),
    provider_kind: z.string().optional(),
    upstream_model: z.string().optional(),
    text: z.string().optional(),
    summary: z.string().optional(),
    signature: z.string().optional(),
    data: z.string().optional(),
    encrypted_content: z.string().optional(),
    item_id: z.string().optional(),
    tool_call_id: z.string().optional(),
  })
  .loose()
  .meta({ id: "ChatReasoningDetail" });

export type ChatReasoningDetail = z.infer<typeof reasoningDetailSchema>;

export interface DecodedReasoningDetails {
  /** Reasoning parts in the order the details listed them. */
  reasoning: ReasoningPart[];
  /** Provider state that belongs to tool calls, by tool-call id. */
  toolCallStates: Map<string, OpaqueReasoningState>;
}

/** One detail for a reasoning block (or, with `toolCallId`, for a tool call's state). */
export function encodeReasoningDetail(
  text: string,
  state: OpaqueReasoningState | undefined,
  toolCallId?: string,
): ChatReasoningDetail {
  const detail: ChatReasoningDetail = { type: text === "" ? "reasoning.encrypted" : "reasoning.text" };
  if (state !== undefined) {
    detail.provider_kind = state.providerKind;
    detail.upstream_model = state.upstreamModel;
  }
  if (text !== "") detail.text = text;
  if (state?.signature !== undefined) detail.signature = state.signature;
  if (state?.redactedData !== undefined) detail.data = state.redactedData;
  if (state?.encryptedContent !== undefined) detail.encrypted_content = state.encryptedContent;
  if (state?.itemId !== undefined) detail.item_id = state.itemId;
  if (toolCallId !== undefined) detail.tool_call_id = toolCallId;
  return detail;
}

/**
 * The `reasoning_details` of a result, or an empty array when nothing in it carries provider state
 * (then the plain `reasoning` string says everything).
 */
export function encodeReasoningDetails(content: readonly ResultContent[]): ChatReasoningDetail[] {
  if (
    !content.some(
      (part) => (part.type === "reasoning" || part.type === "tool-call") && part.providerState !== undefined,
    )
  )
    return [];
  const details: ChatReasoningDetail[] = [];
  for (const part of content) {
    if (part.type === "reasoning") details.push(encodeReasoningDetail(part.text, part.providerState));
    else if (part.type === "tool-call" && part.providerState !== undefined) {
      details.push(encodeReasoningDetail("", part.providerState, part.id));
    }
  }
  return details;
}

export function decodeReasoningDetails(details: readonly ChatReasoningDetail[]): DecodedReasoningDetails {
  const reasoning: ReasoningPart[] = [];
  const toolCallStates = new Map<string, OpaqueReasoningState>();
  for (const detail of details) {
    const state = decodeReasoningState(detail);
    if (detail.tool_call_id !== undefined) {
      if (state !== undefined) toolCallStates.set(detail.tool_call_id, state);
      continue;
    }
    const text = detail.text ?? detail.summary ?? "";
    if (state === undefined && text === "") continue;
    reasoning.push(
      state === undefined ? { type: "reasoning", text } : { type: "reasoning", text, providerState: state },
    );
  }
  return { reasoning, toolCallStates };
}

function decodeReasoningState(detail: ChatReasoningDetail): OpaqueReasoningState | undefined {
  if (detail.provider_kind === undefined || detail.upstream_model === undefined) return undefined;
  const state: OpaqueReasoningState = {
    providerKind: detail.provider_kind,
    upstreamModel: detail.upstream_model,
  };
  if (detail.signature !== undefined) state.signature = detail.signature;
  if (detail.data !== undefined) state.redactedData = detail.data;
  if (detail.encrypted_content !== undefined) state.encryptedContent = detail.encrypted_content;
  if (detail.item_id !== undefined) state.itemId = detail.item_id;
  return state;
}
