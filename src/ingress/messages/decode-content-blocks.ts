/**
 * Messages-format content blocks → canonical parts. `param` arguments are the path of the block,
 * e.g. `messages[2].content[1]`, so a rejection names the exact field.
 *
 * - Empty and whitespace-only text blocks are dropped: Anthropic rejects them ("text content blocks
 *   must contain non-whitespace text") and other hosts gain nothing from them.
 * - `thinking.signature` / `redacted_thinking.data` are the opaque strings the gateway emitted (or a
 *   vendor's native state, which `unwrapOpaqueState` attributes to Anthropic); a thinking block
 *   without a signature (or with `""`, which the gateway emits for reasoning that had no state) is
 *   plain reasoning text. A signature-only block with empty text is kept.
 * - Tool-call state comes back from its carrier thinking block (tool-call-state-carrier.ts).
 * - `tool_use.input` becomes `JSON.stringify(input)`: for the compact JSON upstreams produce that is
 *   the same text the gateway parsed when it emitted the block, so arguments round-trip byte-exact.
 */
import type {
  AssistantContentPart,
  CacheControl,
  FilePart,
  ImagePart,
  MediaSource,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  UserContentPart,
  VerbatimBlock,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import { isHttpUrl } from "../shared/parse-data-url.js";
import {
  KNOWN_ASSISTANT_BLOCK_TYPES,
  KNOWN_USER_BLOCK_TYPES,
  type MessagesAssistantBlockBody,
  type MessagesCacheControlBody,
  type MessagesImageBlockBody,
  type MessagesOtherBlockBody,
  type MessagesTextBlockBody,
  type MessagesUserBlockBody,
} from "./content-block-schemas.js";
import { attachToolCallStates } from "./tool-call-state-carrier.js";

/** The provider kind whose native state a client may bring along in this format. */
export const NATIVE_PROVIDER_KIND = "anthropic";

type DocumentBlockBody = Extract<MessagesUserBlockBody, { type: "document" }>;
type ToolResultBlockBody = Extract<MessagesUserBlockBody, { type: "tool_result" }>;
type MediaSourceBody = MessagesImageBlockBody["source"] | DocumentBlockBody["source"];

export interface DecodedUserBlocks {
  toolResults: ToolResultPart[];
  /** The turn's other blocks, in order. */
  content: UserContentPart[];
  /** Blocks of types the gateway does not know, placed among `content` (for Anthropic routes). */
  extraBlocks: VerbatimBlock[];
}

export function decodeUserBlocks(
  blocks: readonly (MessagesUserBlockBody | MessagesOtherBlockBody)[],
  param: string,
): DecodedUserBlocks {
  const decoded: DecodedUserBlocks = { toolResults: [], content: [], extraBlocks: [] };
  blocks.forEach((block, index) => {
    const blockParam = `${param}[${index}]`;
    if (!isKnownUserBlock(block)) {
      decoded.extraBlocks.push(
        createVerbatimBlock(block, blockParam, decoded.content.length + decoded.extraBlocks.length),
      );
      return;
    }
    switch (block.type) {
      case "text":
        if (!isBlank(block.text)) decoded.content.push(decodeTextBlock(block));
        break;
      case "image":
        decoded.content.push(decodeImageBlock(block, blockParam));
        break;
      case "document":
        decoded.content.push(decodeDocumentBlock(block, blockParam));
        break;
      case "tool_result":
        decoded.toolResults.push(decodeToolResultBlock(block, blockParam));
        break;
    }
  });
  return decoded;
}

export interface DecodedAssistantBlocks {
  content: AssistantContentPart[];
  /** Blocks of types the gateway does not know, placed among `content` (for Anthropic routes). */
  extraBlocks: VerbatimBlock[];
}

export function decodeAssistantBlocks(
  blocks: readonly (MessagesAssistantBlockBody | MessagesOtherBlockBody)[],
  param: string,
): DecodedAssistantBlocks {
  const content: AssistantContentPart[] = [];
  const extraBlocks: VerbatimBlock[] = [];
  // Carrier thinking blocks leave `content` below, so an extra's place counts the other parts only.
  let kept = 0;
  blocks.forEach((block, index) => {
    if (!isKnownAssistantBlock(block)) {
      extraBlocks.push(createVerbatimBlock(block, `${param}[${index}]`, kept + extraBlocks.length));
      return;
    }
    const before = content.length;
    decodeAssistantBlock(block, content);
    for (const part of content.slice(before)) if (!isCarrier(part)) kept++;
  });
  return { content: attachToolCallStates(content), extraBlocks };
}

function isCarrier(part: AssistantContentPart): boolean {
  return part.type === "reasoning" && part.providerState?.toolCallId !== undefined;
}

/** A block the gateway does not know, for Anthropic routes: `messages[2].content[1](search_result)`. */
function createVerbatimBlock(block: MessagesOtherBlockBody, param: string, index: number): VerbatimBlock {
  return { family: "anthropic_messages", param, kind: block.type, index, block };
}

function isKnownUserBlock(
  block: MessagesUserBlockBody | MessagesOtherBlockBody,
): block is MessagesUserBlockBody {
  return KNOWN_USER_BLOCK_TYPES.has(block.type);
}

function isKnownAssistantBlock(
  block: MessagesAssistantBlockBody | MessagesOtherBlockBody,
): block is MessagesAssistantBlockBody {
  return KNOWN_ASSISTANT_BLOCK_TYPES.has(block.type);
}

function decodeAssistantBlock(block: MessagesAssistantBlockBody, content: AssistantContentPart[]): void {
  switch (block.type) {
    case "text":
      if (!isBlank(block.text)) content.push(decodeTextBlock(block));
      break;
    case "thinking": {
      const part = decodeThinkingBlock(block.thinking, block.signature);
      if (part !== undefined) content.push(part);
      break;
    }
    case "redacted_thinking":
      content.push({
        type: "reasoning",
        text: "",
        providerState: unwrapOpaqueState(block.data, NATIVE_PROVIDER_KIND, "redactedData"),
      });
      break;
    case "tool_use":
      content.push(
        withCacheControl<ToolCallPart>(
          { type: "tool-call", id: block.id, name: block.name, arguments: JSON.stringify(block.input) },
          block.cache_control,
        ),
      );
      break;
    default:
      // Server-tool transcript blocks and generated images (content-block-schemas.ts says why they go).
      break;
  }
}

/** A string or text blocks (system prompt, string turns), blank ones dropped. */
export function decodeTextContent(content: string | readonly MessagesTextBlockBody[]): TextPart[] {
  if (typeof content === "string") return isBlank(content) ? [] : [{ type: "text", text: content }];
  return content.filter((block) => !isBlank(block.text)).map(decodeTextBlock);
}

export function decodeTextBlock(block: MessagesTextBlockBody): TextPart {
  const text: TextPart = { type: "text", text: block.text };
  return withCacheControl(text, block.cache_control);
}

function decodeThinkingBlock(text: string, signature: string | null | undefined): ReasoningPart | undefined {
  if (signature === null || signature === undefined || signature === "") {
    return text === "" ? undefined : { type: "reasoning", text };
  }
  return {
    type: "reasoning",
    text,
    providerState: unwrapOpaqueState(signature, NATIVE_PROVIDER_KIND, "signature"),
  };
}

function decodeImageBlock(block: MessagesImageBlockBody, param: string): ImagePart {
  const image: ImagePart = { type: "image", source: decodeMediaSource(block.source, `${param}.source`) };
  return withCacheControl(image, block.cache_control);
}

function decodeDocumentBlock(block: DocumentBlockBody, param: string): FilePart {
  const file: FilePart = { type: "file", source: decodeMediaSource(block.source, `${param}.source`) };
  if (typeof block.title === "string" && block.title !== "") file.title = block.title;
  file.param = param;
  return withCacheControl(file, block.cache_control);
}

function decodeToolResultBlock(block: ToolResultBlockBody, param: string): ToolResultPart {
  const content: Array<TextPart | ImagePart> = [];
  const extraBlocks: NonNullable<ToolResultPart["extraBlocks"]> = [];
  if (typeof block.content === "string") {
    if (!isBlank(block.content)) content.push({ type: "text", text: block.content });
  } else {
    block.content?.forEach((inner, index) => {
      if (isTextBlock(inner)) {
        if (!isBlank(inner.text)) content.push(decodeTextBlock(inner));
      } else if (isImageBlock(inner)) content.push(decodeImageBlock(inner, `${param}.content[${index}]`));
      else {
        // Another block type (`tool_reference`): for Anthropic routes, at its place among the kept blocks.
        extraBlocks.push({
          family: "anthropic_messages",
          param: `${param}.content[${index}]`,
          kind: inner.type,
          index: content.length + extraBlocks.length,
          block: inner,
        });
      }
    });
  }
  const result: ToolResultPart = { type: "tool-result", toolCallId: block.tool_use_id, content };
  if (extraBlocks.length > 0) result.extraBlocks = extraBlocks;
  if (block.is_error === true) result.isError = true;
  return withCacheControl(result, block.cache_control);
}

type ToolResultContentBody = Exclude<NonNullable<ToolResultBlockBody["content"]>, string>[number];

function isTextBlock(block: ToolResultContentBody): block is MessagesTextBlockBody {
  return block.type === "text";
}

function isImageBlock(block: ToolResultContentBody): block is MessagesImageBlockBody {
  return block.type === "image";
}

function decodeMediaSource(source: MediaSourceBody, param: string): MediaSource {
  switch (source.type) {
    case "base64":
      return { kind: "base64", mediaType: source.media_type, data: source.data };
    case "url":
      if (!isHttpUrl(source.url))
        throw GatewayError.invalidRequest(`${param}.url must be an http(s) URL`, `${param}.url`);
      return { kind: "url", url: source.url };
    case "text":
      // A plain-text document: the same bytes as a base64 file, which every adapter can forward.
      return {
        kind: "base64",
        mediaType: source.media_type ?? "text/plain",
        data: Buffer.from(source.data, "utf8").toString("base64"),
      };
    case "file":
      // Files API ids live at a provider; the gateway has no file store to resolve them against.
      throw GatewayError.invalidRequest(
        `${param} of type file is not supported; send the content as base64 or a URL`,
        `${param}.file_id`,
      );
  }
}

function withCacheControl<T extends { cacheControl?: CacheControl }>(
  part: T,
  body: MessagesCacheControlBody | null | undefined,
): T {
  if (body !== null && body !== undefined) {
    part.cacheControl = body.ttl === undefined ? { type: body.type } : { type: body.type, ttl: body.ttl };
  }
  return part;
}

function isBlank(text: string): boolean {
  return text.trim() === "";
}
