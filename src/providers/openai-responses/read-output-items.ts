/**
 * Readers for complete Responses output items (from a JSON response, `output_item.done`, or the
 * terminal event's `output`), shared by the JSON and stream parsers so both give the same result.
 */
import {
  encodeCustomCallArguments,
  type OpaqueReasoningState,
  type ResponsesCallShape,
} from "../../canonical/index.js";
import { createToolCallId, normalizeArguments } from "../openai-compatible/read-message-fields.js";
import { readRecords } from "../shared/read-wire-values.js";
import { RESPONSES_PROVIDER_KIND } from "./provider-kind.js";
import type { ResponsesContentWire, ResponsesOutputItemWire } from "./wire-types.js";

/**
 * Separator between the parts of one reasoning item's summary (`summary_index` 0, 1, …): each part
 * is a paragraph of its own, usually starting with a bold title.
 */
export const SUMMARY_PART_SEPARATOR = "\n\n";

/**
 * Reasoning text of an item: its summary parts, or, when a server sends raw reasoning instead
 * (`content: [{type:"reasoning_text"}]`, open-weight models), that.
 */
export function readReasoningText(item: ResponsesOutputItemWire): string {
  const summary = readTexts(item.summary, "summary_text");
  if (summary.length > 0) return summary.join(SUMMARY_PART_SEPARATOR);
  return readTexts(item.content, "reasoning_text").join(SUMMARY_PART_SEPARATOR);
}

/**
 * The state that lets the next turn replay this reasoning item: its encrypted content and id,
 * bound to the kind and the configured upstream model (not the dated snapshot in the response).
 * Undefined without encrypted content, which a stateless request could not use.
 */
export function readReasoningState(
  item: ResponsesOutputItemWire,
  upstreamModel: string,
): OpaqueReasoningState | undefined {
  if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return undefined;
  return {
    providerKind: RESPONSES_PROVIDER_KIND,
    upstreamModel,
    encryptedContent: item.encrypted_content,
    ...(typeof item.id === "string" && item.id !== "" ? { itemId: item.id } : {}),
  };
}

/** Text of a message item; refusal parts are text the caller reads, flagged as a refusal. */
export function readMessageText(item: ResponsesOutputItemWire): { text: string; refusal: boolean } {
  let text = "";
  let refusal = false;
  for (const part of readRecords<ResponsesContentWire>(item.content)) {
    if (part.type === "output_text" && typeof part.text === "string") text += part.text;
    if (part.type === "refusal" && typeof part.refusal === "string") {
      text += part.refusal;
      refusal = true;
    }
  }
  return { text, refusal };
}

export interface FunctionCallFields extends ResponsesCallShape {
  /** `call_id`: what the function_call_output of the next turn must quote. */
  id: string;
  name: string;
  /** Valid JSON text (`{}` when empty), otherwise byte-exact. */
  arguments: string;
}

/** A `function_call` item, or a `custom_tool_call` (its input as `{"input": <text>}` arguments). */
export function readFunctionCall(item: ResponsesOutputItemWire): FunctionCallFields {
  const custom = item.type === "custom_tool_call";
  return {
    id: readCallId(item),
    name: typeof item.name === "string" ? item.name : "",
    arguments: custom
      ? encodeCustomCallArguments(typeof item.input === "string" ? item.input : "")
      : normalizeArguments(item.arguments),
    ...readCallShape(item),
  };
}

/** `custom` for a custom_tool_call, and the item's `namespace` when it names one. */
export function readCallShape(item: ResponsesOutputItemWire | null | undefined): ResponsesCallShape {
  const shape: ResponsesCallShape = {};
  if (item?.type === "custom_tool_call") shape.custom = true;
  if (typeof item?.namespace === "string" && item.namespace !== "") shape.namespace = item.namespace;
  return shape;
}

/** `call_id`, else the item id, else a fresh one: a call must always be answerable. */
export function readCallId(item: ResponsesOutputItemWire): string {
  if (typeof item.call_id === "string" && item.call_id !== "") return item.call_id;
  if (typeof item.id === "string" && item.id !== "") return item.id;
  return createToolCallId();
}

function readTexts(parts: ResponsesContentWire[] | null | undefined, type: string): string[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((part) => (part?.type === type && typeof part.text === "string" ? [part.text] : []));
}
