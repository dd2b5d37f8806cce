/**
 * Canonical system + messages → Responses `instructions` and `input` items.
 *
 * The gateway calls Responses statelessly (`store: false`), so every turn is replayed in full:
 * - reasoning items go back only when they are this upstream's own state (same kind and model,
 *   `isStateForUpstream`) and carry `encrypted_content`: without it a stateless request cannot
 *   resolve the item. Each one is placed immediately before the item that followed it in the
 *   output, which canonical order preserves; a reasoning item with nothing after
 *   it in its turn is dropped, because the API rejects it ("provided without its required
 *   following item"). Foreign or stateless reasoning is dropped, never turned into visible text;
 * - assistant text becomes `message` items with `output_text`, tool calls `function_call` items
 *   (with the `namespace` the call was made in);
 * - a web search OpenAI ran itself goes back as its own `web_search_call` item (this upstream's
 *   state only), so a reasoning item that preceded it still has its following item;
 * - tool results become `function_call_output` items: a string, or `input_text`/`input_image`
 *   parts when the result holds images;
 * - items a Responses caller sent of types the gateway does not know (`custom_tool_call` and its
 *   output, `compaction`) go back verbatim in their places.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  FilePart,
  ImagePart,
  MediaSource,
  TextPart,
  ToolResultPart,
  UserContentPart,
  VerbatimBlock,
} from "../../canonical/index.js";
import { isStateForUpstream } from "../shared/is-state-for-upstream.js";
import { RESPONSES_PROVIDER_KIND } from "./provider-kind.js";
import type { ResponsesInputContent, ResponsesInputItem } from "./wire-types.js";

/**
 * System parts joined into one `instructions` string. Separate parts are separate paragraphs;
 * empty parts add nothing.
 */
export function convertInstructions(system: TextPart[]): string | undefined {
  const texts = system.map((part) => part.text).filter((text) => text !== "");
  return texts.length === 0 ? undefined : texts.join("\n\n");
}

export function convertInput(messages: CanonicalMessage[], upstreamModel: string): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user": {
        const content = message.content.flatMap(convertUserPart);
        if (content.length > 0) items.push({ type: "message", role: "user", content });
        for (const extra of ownExtras(message.extraBlocks)) items.push(extra.block);
        break;
      }
      case "assistant":
        for (const item of convertAssistantTurn(
          message.content,
          upstreamModel,
          ownExtras(message.extraBlocks),
        ))
          items.push(item);
        break;
      case "tool":
        for (const part of message.content) items.push(convertToolResult(part));
        break;
    }
  }
  return items;
}

/**
 * The items a Responses caller sent that the gateway has no vocabulary for (`custom_tool_call`),
 * in index order; blocks of other wire families are left out (the drop report names them).
 */
function ownExtras(extras: readonly VerbatimBlock[] | undefined): VerbatimBlock[] {
  if (extras === undefined) return [];
  return extras.filter((extra) => extra.family === "responses").sort((a, b) => a.index - b.index);
}

function convertAssistantTurn(
  content: AssistantContentPart[],
  upstreamModel: string,
  extras: readonly VerbatimBlock[],
): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let text = "";
  const flushText = () => {
    if (text !== "")
      items.push({ type: "message", role: "assistant", content: [{ type: "output_text", text }] });
    text = "";
  };
  // Verbatim items go where the caller sent them: before the part that followed them.
  let nextExtra = 0;
  const placeExtras = (partIndex: number) => {
    while (nextExtra < extras.length && extras[nextExtra].index <= partIndex + nextExtra) {
      flushText();
      items.push(extras[nextExtra++].block);
    }
  };
  for (const [partIndex, part] of content.entries()) {
    placeExtras(partIndex);
    if (part.type === "text") {
      text += part.text;
      continue;
    }
    flushText();
    if (part.type === "tool-call") {
      items.push({
        type: "function_call",
        call_id: part.id,
        name: part.name,
        arguments: part.arguments,
        ...(part.namespace === undefined ? {} : { namespace: part.namespace }),
      });
      continue;
    }
    const state = part.providerState;
    if (!isStateForUpstream(state, RESPONSES_PROVIDER_KIND, upstreamModel)) continue;
    if (part.type === "native-tool") {
      const item = readWebSearchItem(state.nativeBlock);
      if (item !== undefined) items.push(item);
      continue;
    }
    if (state.encryptedContent === undefined || state.encryptedContent === "") continue;
    items.push({
      type: "reasoning",
      ...(state.itemId === undefined ? {} : { id: state.itemId }),
      summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
      encrypted_content: state.encryptedContent,
    });
  }
  placeExtras(Number.POSITIVE_INFINITY);
  flushText();
  while (items.at(-1)?.type === "reasoning") items.pop();
  return items;
}

/** The `web_search_call` item kept by the parser, or undefined when the state holds none. */
function readWebSearchItem(block: string | undefined): ResponsesInputItem | undefined {
  if (block === undefined) return undefined;
  try {
    const item: unknown = JSON.parse(block);
    if (
      typeof item === "object" &&
      item !== null &&
      (item as { type?: unknown }).type === "web_search_call" &&
      typeof (item as { id?: unknown }).id === "string"
    ) {
      return item as ResponsesInputItem;
    }
  } catch {
    // Not JSON: nothing the upstream could take.
  }
  return undefined;
}

function convertUserPart(part: UserContentPart): ResponsesInputContent[] {
  switch (part.type) {
    case "text":
      return part.text === "" ? [] : [{ type: "input_text", text: part.text }];
    case "image":
      return [convertImage(part)];
    case "file":
      return [convertFile(part)];
  }
}

function convertToolResult(part: ToolResultPart): ResponsesInputItem {
  const allText = part.content.every((item) => item.type === "text");
  if (allText) {
    const output = part.content.map((item) => (item.type === "text" ? item.text : "")).join("");
    return { type: "function_call_output", call_id: part.toolCallId, output };
  }
  const output = part.content.flatMap((item): ResponsesInputContent[] => {
    if (item.type === "image") return [convertImage(item)];
    return item.text === "" ? [] : [{ type: "input_text", text: item.text }];
  });
  return { type: "function_call_output", call_id: part.toolCallId, output };
}

/** `detail` is a required field of `input_image`; `auto` is the API's own default. */
function convertImage(part: ImagePart): ResponsesInputContent {
  return { type: "input_image", image_url: toUrl(part.source), detail: part.detail ?? "auto" };
}

/** A URL source goes as `file_url`; inline data as a data URL in `file_data`, which needs a name. */
function convertFile(part: FilePart): ResponsesInputContent {
  const filename = part.filename ?? part.title;
  if (part.source.kind === "url") {
    return { type: "input_file", file_url: part.source.url, ...(filename === undefined ? {} : { filename }) };
  }
  return {
    type: "input_file",
    filename: filename ?? defaultFilename(part.source.mediaType),
    file_data: toUrl(part.source),
  };
}

function toUrl(source: MediaSource): string {
  return source.kind === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

function defaultFilename(mediaType: string): string {
  const subtype = /^[a-z]+\/([a-z0-9.+-]+)/i.exec(mediaType)?.[1];
  return subtype === undefined ? "file" : `file.${subtype === "plain" ? "txt" : subtype}`;
}
