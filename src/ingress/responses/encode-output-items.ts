/**
 * The `output` items of a response and the one rule that lays them out, shared by the
 * non-streaming encoder and the stream encoder so that `response.completed.output` is identical to
 * the non-streamed `output`:
 *
 * - items follow generation order;
 * - each reasoning block is one `reasoning` item (its text as one summary part, its provider state
 *   wrapped into `encrypted_content`); blocks are not merged, because each carries its own state
 *   (e.g. an Anthropic thinking signature next to a redacted-thinking block);
 * - text that follows text is one `message` item with one `output_text` part;
 * - each tool call is one `function_call` item; state that belongs to the call (Gemini thought
 *   signatures) has no field there and rides in a carrier: a `reasoning` item with an empty summary
 *   AFTER the run of function_call items the call belongs to, its state naming the call in
 *   `toolCallId` (messages/tool-call-state-carrier.ts). After, not before, because a stream only
 *   learns the state when the call is complete, and its function_call item is on the wire by then;
 *   after the run, not right after the call, so the calls of a turn stay together.
 *   decode-input.ts puts the state back on the call, wherever in the turn the carrier stands;
 * - empty text, and reasoning with neither text nor state, produce nothing.
 *
 * For the usual turn (reasoning, text, tool calls) that is one reasoning item, one message item, one
 * function_call item per call. Item ids are derived from the request id and the output index, so they
 * are deterministic and unique within the response. With an {@link ItemSeal} (the caller may send
 * `item_reference`s), reasoning and message items carry themselves in their id (item-seal.ts).
 */
import type { OpaqueReasoningState, ResultContent } from "../../canonical/index.js";
import { createCarrierState } from "../messages/tool-call-state-carrier.js";
import { wrapOpaqueState } from "../opaque-state.js";
import type { ItemSeal } from "./item-seal.js";

export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: [];
  logprobs: [];
}

export interface ResponsesReasoningItem {
  id: string;
  type: "reasoning";
  summary: Array<{ type: "summary_text"; text: string }>;
  encrypted_content?: string;
}

export interface ResponsesMessageItem {
  id: string;
  type: "message";
  status: "in_progress" | "completed";
  role: "assistant";
  content: ResponsesOutputText[];
}

export interface ResponsesFunctionCallItem {
  id: string;
  type: "function_call";
  status: "in_progress" | "completed";
  call_id: string;
  name: string;
  arguments: string;
}

export type ResponsesOutputItem = ResponsesReasoningItem | ResponsesMessageItem | ResponsesFunctionCallItem;

const ITEM_ID_PREFIXES = { reasoning: "rs", message: "msg", function_call: "fc" } as const;

export function createItemId(
  type: ResponsesOutputItem["type"],
  requestId: string,
  outputIndex: number,
): string {
  return `${ITEM_ID_PREFIXES[type]}_${requestId}_${outputIndex}`;
}

export function encodeOutputText(text: string): ResponsesOutputText {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function encodeReasoningItem(
  id: string,
  text: string,
  providerState: OpaqueReasoningState | undefined,
): ResponsesReasoningItem {
  const item: ResponsesReasoningItem = {
    id,
    type: "reasoning",
    summary: text === "" ? [] : [{ type: "summary_text", text }],
  };
  if (providerState !== undefined) item.encrypted_content = wrapOpaqueState(providerState);
  return item;
}

export function encodeMessageItem(id: string, text: string): ResponsesMessageItem {
  return { id, type: "message", status: "completed", role: "assistant", content: [encodeOutputText(text)] };
}

export function encodeFunctionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
): ResponsesFunctionCallItem {
  return { id, type: "function_call", status: "completed", call_id: callId, name, arguments: args };
}

/**
 * The item with its content sealed into its id (item-seal.ts): a reasoning item whole, a message
 * item as the role and text an `input` message needs; function calls are never referenced.
 */
export function sealOutputItem<T extends ResponsesOutputItem>(item: T, seal: ItemSeal): T {
  if (item.type === "function_call") return item;
  const { id, ...content } = item;
  const sealed =
    item.type === "message"
      ? {
          type: "message",
          role: "assistant",
          content: item.content.map(({ type, text }) => ({ type, text })),
        }
      : content;
  return { ...item, id: seal.seal(id, sealed) };
}

/** A result's content → its output items, by the rule above. */
export function encodeOutputItems(
  content: readonly ResultContent[],
  requestId: string,
  seal?: ItemSeal,
): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  let openText: string | undefined;
  /** States of the calls of the current run of function_call items, for the carriers after it. */
  let callStates: OpaqueReasoningState[] = [];
  const closeCalls = () => {
    for (const state of callStates) {
      items.push(encodeReasoningItem(createItemId("reasoning", requestId, items.length), "", state));
    }
    callStates = [];
  };
  const closeText = () => {
    if (openText === undefined) return;
    items.push(encodeMessageItem(createItemId("message", requestId, items.length), openText));
    openText = undefined;
  };
  for (const part of content) {
    if (part.type === "text") {
      if (part.text === "") continue;
      closeCalls();
      openText = (openText ?? "") + part.text;
    } else if (part.type === "reasoning") {
      if (part.text === "" && part.providerState === undefined) continue;
      closeText();
      closeCalls();
      const id = createItemId("reasoning", requestId, items.length);
      items.push(encodeReasoningItem(id, part.text, part.providerState));
    } else if (part.type === "tool-call") {
      closeText();
      const id = createItemId("function_call", requestId, items.length);
      items.push(encodeFunctionCallItem(id, part.id, part.name, part.arguments));
      if (part.providerState !== undefined) callStates.push(createCarrierState(part.providerState, part.id));
    }
  }
  closeText();
  closeCalls();
  return seal === undefined ? items : items.map((item) => sealOutputItem(item, seal));
}
