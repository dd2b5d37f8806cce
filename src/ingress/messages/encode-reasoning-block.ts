/**
 * A canonical reasoning block → a `thinking` or `redacted_thinking` content block, shared by the
 * response encoder and the stream encoder so both carry provider state the same way.
 *
 * The whole provider state travels wrapped (`wrapOpaqueState`) in the one opaque string the format
 * has: the thinking `signature`, or the redacted block's `data`. Decoding the string when the client
 * sends the turn back restores the state byte-identical, with the provider and model it belongs to.
 * Reasoning without state gets `signature: ""`: the field is required by the SDK types, the SDKs
 * accept an empty string, and the decoder reads `""` back as "no state" instead of inventing a
 * signature that an upstream would reject.
 */
import type { OpaqueReasoningState } from "../../canonical/index.js";
import { wrapOpaqueState } from "../opaque-state.js";

export type MessagesReasoningBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** undefined when there is nothing to show or carry (empty text, no state). */
export function encodeReasoningBlock(
  text: string,
  state: OpaqueReasoningState | undefined,
): MessagesReasoningBlock | undefined {
  if (text === "" && state?.redactedData !== undefined) {
    return { type: "redacted_thinking", data: wrapOpaqueState(state) };
  }
  if (text === "" && state === undefined) return undefined;
  return { type: "thinking", thinking: text, signature: encodeSignature(state) };
}

export function encodeSignature(state: OpaqueReasoningState | undefined): string {
  return state === undefined ? "" : wrapOpaqueState(state);
}
