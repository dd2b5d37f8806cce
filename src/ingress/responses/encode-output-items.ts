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
 * - each tool call is one `function_call` item (with the `namespace` an OpenAI Responses route named),
 *   or, for a call marked `custom` (a freeform tool's, canonical/request.ts), one `custom_tool_call`
 *   item whose `input` is the text of its `{"input": <text>}` arguments; state that belongs to the call (Gemini thought
 *   signatures) has no field there and rides in a carrier: a `reasoning` item with an empty summary
 *   AFTER the run of function_call items the call belongs to, its state naming the call in
 *   `toolCallId` (messages/tool-call-state-carrier.ts). After, not before, because a stream only
 *   learns the state when the call is complete, and its function_call item is on the wire by then;
 *   after the run, not right after the call, so the calls of a turn stay together.
 *   decode-input.ts puts the state back on the call, wherever in the turn the carrier stands;
 * - empty text, and reasoning with neither text nor state, produce nothing;
 * - a server tool the format can show is one item where the model called it: a `web_search_call`
 *   (a search as a `search` action with the sources it found, a page read by web_fetch as an
 *   `open_page` action: the vocabulary has no fetch of its own) or an `image_generation_call` (the
 *   image as base64 in `result`), finished with its result; a call whose result never came is
 *   `failed`. It closes the text before it, so the next round's text is a new message, as OpenAI
 *   lays out its own tool calls. Other server tools (datetime, …) have no item in this vocabulary
 *   and change nothing in the layout: the model's text carries what they returned;
 * - a text entry's citations become `url_citation` annotations of the output_text, their offsets
 *   shifted by the text joined before the entry (offsets are UTF-16 code units, as JavaScript
 *   string indices are).
 *
 * For the usual turn (reasoning, text, tool calls) that is one reasoning item, one message item, one
 * function_call item per call. Item ids are derived from the request id and the output index, so they
 * are deterministic and unique within the response; a server tool's item id is `ws_<call id>` or
 * `ig_<call id>`. With an {@link ItemSeal} (the caller may send `item_reference`s), reasoning and
 * message items carry themselves in their id (item-seal.ts), and a server tool's item id carries
 * only its type: a replay drops the item (the model's text already holds what the tool found or
 * made), so the seal only has to prove the gateway issued it.
 */
import {
  type OpaqueReasoningState,
  type ResponsesCallShape,
  type ResultContent,
  readCustomCallInput,
  type ServerToolId,
  type ServerToolResult,
  type UrlCitation,
} from "../../canonical/index.js";
import { createCarrierState } from "../messages/tool-call-state-carrier.js";
import { wrapOpaqueState } from "../opaque-state.js";
import type { ItemSeal } from "./item-seal.js";

export interface ResponsesUrlCitation {
  type: "url_citation";
  url: string;
  title: string;
  start_index: number;
  end_index: number;
}

export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: ResponsesUrlCitation[];
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
  /** `incomplete` for the message a token cap or filter cut, as the response's own status says. */
  status: "in_progress" | "completed" | "incomplete";
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
  namespace?: string;
}

/** A call of a freeform (`custom`) tool. */
export interface ResponsesCustomToolCallItem {
  id: string;
  type: "custom_tool_call";
  status: "in_progress" | "completed";
  call_id: string;
  name: string;
  input: string;
  namespace?: string;
}

/** `query` too, although deprecated: older typed clients read it instead of `queries`. */
export type ResponsesWebSearchAction =
  | { type: "search"; query: string; queries: string[]; sources: Array<{ type: "url"; url: string }> }
  | { type: "open_page"; url: string | null };

export interface ResponsesWebSearchCallItem {
  id: string;
  type: "web_search_call";
  status: "in_progress" | "completed" | "failed";
  /** Absent while in progress (`output_item.added`), as OpenAI sends it. */
  action?: ResponsesWebSearchAction;
}

/**
 * OpenAI's item for its hosted image tool. `size` and `output_format` are not in the SDK's type but
 * OpenAI sends them; `revised_prompt` too, when the provider rewrote the prompt.
 */
export interface ResponsesImageGenerationCallItem {
  id: string;
  type: "image_generation_call";
  status: "in_progress" | "completed" | "failed";
  /** The image, base64; null when it failed. Absent while in progress (`output_item.added`). */
  result?: string | null;
  revised_prompt?: string;
  /** `<width>x<height>`. */
  size?: string;
  /** `png`, `jpeg`, `webp` (the image's own type). */
  output_format?: string;
}

export type ResponsesServerToolItem = ResponsesWebSearchCallItem | ResponsesImageGenerationCallItem;

export type ResponsesOutputItem =
  | ResponsesReasoningItem
  | ResponsesMessageItem
  | ResponsesFunctionCallItem
  | ResponsesCustomToolCallItem
  | ResponsesServerToolItem;

const ITEM_ID_PREFIXES = {
  reasoning: "rs",
  message: "msg",
  function_call: "fc",
  custom_tool_call: "ctc",
} as const;

export function createItemId(
  type: keyof typeof ITEM_ID_PREFIXES,
  requestId: string,
  outputIndex: number,
): string {
  return `${ITEM_ID_PREFIXES[type]}_${requestId}_${outputIndex}`;
}

export function encodeOutputText(
  text: string,
  annotations: ResponsesUrlCitation[] = [],
): ResponsesOutputText {
  return { type: "output_text", text, annotations, logprobs: [] };
}

/** A citation of a text block → an annotation of the output_text that starts `shift` units earlier. */
export function encodeUrlCitation(citation: UrlCitation, shift: number): ResponsesUrlCitation {
  return {
    type: "url_citation",
    url: citation.url,
    title: citation.title,
    start_index: citation.startIndex + shift,
    end_index: citation.endIndex + shift,
  };
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

export function encodeMessageItem(
  id: string,
  text: string,
  annotations: ResponsesUrlCitation[] = [],
  status: "completed" | "incomplete" = "completed",
): ResponsesMessageItem {
  return {
    id,
    type: "message",
    status,
    role: "assistant",
    content: [encodeOutputText(text, annotations)],
  };
}

/** A completed call: a `function_call` item, or a `custom_tool_call` one for a call marked `custom`. */
export function encodeFunctionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  shape: ResponsesCallShape = {},
  /** A custom call's input when already known (saves reading it from `args`). */
  knownInput?: string,
): ResponsesFunctionCallItem | ResponsesCustomToolCallItem {
  const namespace = shape.namespace === undefined ? {} : { namespace: shape.namespace };
  if (shape.custom === true) {
    const input = knownInput ?? readCustomCallInput(args);
    return { id, type: "custom_tool_call", status: "completed", call_id: callId, name, input, ...namespace };
  }
  return {
    id,
    type: "function_call",
    status: "completed",
    call_id: callId,
    name,
    arguments: args,
    ...namespace,
  };
}

/** The item type of a call of this shape. */
export function callItemType(shape: ResponsesCallShape): "function_call" | "custom_tool_call" {
  return shape.custom === true ? "custom_tool_call" : "function_call";
}

/** The item that shows a server tool's call, or undefined for a tool this format has no item for. */
export function serverToolItemType(tool: ServerToolId): ResponsesServerToolItem["type"] | undefined {
  if (tool === "web_search" || tool === "web_fetch") return "web_search_call";
  if (tool === "image") return "image_generation_call";
  return undefined;
}

/** `ws_<call id>` or `ig_<call id>`, OpenAI's prefixes for these items. */
export function createServerToolItemId(type: ResponsesServerToolItem["type"], callId: string): string {
  return `${type === "web_search_call" ? "ws" : "ig"}_${callId}`;
}

/** The finished item of a server tool's call that has one (see serverToolItemType). */
export function encodeServerToolItem(
  id: string,
  tool: ServerToolId,
  input: Record<string, unknown>,
  result: ServerToolResult | undefined,
): ResponsesServerToolItem {
  return serverToolItemType(tool) === "image_generation_call"
    ? encodeImageGenerationCallItem(id, result)
    : encodeWebSearchCallItem(id, tool, input, result);
}

/** The finished item of an image call: the image with its size and format, or `failed` without one. */
export function encodeImageGenerationCallItem(
  id: string,
  result: ServerToolResult | undefined,
): ResponsesImageGenerationCallItem {
  const output = result?.status === "completed" ? result.output : undefined;
  if (output?.kind !== "image") return { id, type: "image_generation_call", status: "failed", result: null };
  const item: ResponsesImageGenerationCallItem = {
    id,
    type: "image_generation_call",
    status: "completed",
    result: output.base64,
  };
  if (output.revisedPrompt !== undefined) item.revised_prompt = output.revisedPrompt;
  item.size = output.size;
  item.output_format = output.mediaType.replace(/^image\//, "");
  return item;
}

/**
 * The finished item of a web_search or web_fetch call: its result's status and action, or, with no
 * result, `failed` with the action the call's input asked for.
 */
export function encodeWebSearchCallItem(
  id: string,
  tool: ServerToolId,
  input: Record<string, unknown>,
  result: ServerToolResult | undefined,
): ResponsesWebSearchCallItem {
  const output = result?.status === "completed" ? result.output : undefined;
  let action: ResponsesWebSearchAction;
  if (tool === "web_fetch") {
    // The page finally read (after redirects) once it was; the URL asked for otherwise.
    const url = output?.kind === "fetch" ? output.finalUrl : typeof input.url === "string" ? input.url : null;
    action = { type: "open_page", url };
  } else {
    const query =
      output?.kind === "search" ? output.query : typeof input.query === "string" ? input.query : "";
    const sources =
      output?.kind === "search" ? output.sources.map(({ url }) => ({ type: "url" as const, url })) : [];
    action = { type: "search", query, queries: query === "" ? [] : [query], sources };
  }
  const status = result?.status === "completed" ? "completed" : "failed";
  return { id, type: "web_search_call", status, action };
}

/**
 * The item with its content sealed into its id (item-seal.ts): a reasoning item whole, a message
 * item as the role and text an `input` message needs, a server tool's item as its type alone (a
 * replay drops it; an image would not fit anyway); function calls are never referenced.
 */
export function sealOutputItem<T extends ResponsesOutputItem>(item: T, seal: ItemSeal): T {
  if (item.type === "function_call" || item.type === "custom_tool_call") return item;
  const { id, ...content } = item;
  const sealed =
    item.type === "message"
      ? {
          type: "message",
          role: "assistant",
          content: item.content.map(({ type, text }) => ({ type, text })),
        }
      : item.type === "web_search_call" || item.type === "image_generation_call"
        ? { type: item.type }
        : content;
  const sealedItem = { ...item };
  sealedItem.id = seal.seal(id, sealed);
  return sealedItem;
}

/**
 * A result's content → its output items, by the rule above. `incomplete`: the response was cut
 * (token cap, filter), so a message that is the last item was cut too and says so.
 */
export function encodeOutputItems(
  content: readonly ResultContent[],
  requestId: string,
  seal?: ItemSeal,
  incomplete = false,
): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  let openText: string | undefined;
  let openAnnotations: ResponsesUrlCitation[] = [];
  /** Position of each server tool's item, by call id, for its result to finish it in place. */
  const toolItems = new Map<string, number>();
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
    items.push(
      encodeMessageItem(createItemId("message", requestId, items.length), openText, openAnnotations),
    );
    openText = undefined;
    openAnnotations = [];
  };
  for (const part of content) {
    if (part.type === "text") {
      if (part.text === "") continue;
      closeCalls();
      const shift = openText?.length ?? 0;
      for (const citation of part.citations ?? []) openAnnotations.push(encodeUrlCitation(citation, shift));
      openText = (openText ?? "") + part.text;
    } else if (part.type === "reasoning") {
      if (part.text === "" && part.providerState === undefined) continue;
      closeText();
      closeCalls();
      const id = createItemId("reasoning", requestId, items.length);
      items.push(encodeReasoningItem(id, part.text, part.providerState));
    } else if (part.type === "tool-call") {
      closeText();
      const id = createItemId(callItemType(part), requestId, items.length);
      items.push(encodeFunctionCallItem(id, part.id, part.name, part.arguments, part));
      if (part.providerState !== undefined) callStates.push(createCarrierState(part.providerState, part.id));
    } else if (part.type === "server-tool-call") {
      const { call } = part;
      const type = serverToolItemType(call.tool);
      if (type === undefined) continue;
      closeText();
      closeCalls();
      toolItems.set(call.id, items.length);
      items.push(
        encodeServerToolItem(createServerToolItemId(type, call.id), call.tool, call.input, undefined),
      );
    } else if (part.type === "server-tool-result") {
      const { result } = part;
      const type = serverToolItemType(result.tool);
      if (type === undefined) continue;
      const item = encodeServerToolItem(
        createServerToolItemId(type, result.callId),
        result.tool,
        result.input,
        result,
      );
      const index = toolItems.get(result.callId);
      if (index !== undefined) {
        items[index] = item;
        continue;
      }
      // A result without its call (never from the engine): shown where it came.
      closeText();
      closeCalls();
      items.push(item);
    }
  }
  closeText();
  closeCalls();
  const last = items.at(-1);
  if (incomplete && last?.type === "message") last.status = "incomplete";
  return seal === undefined ? items : items.map((item) => sealOutputItem(item, seal));
}
