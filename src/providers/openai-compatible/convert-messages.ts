/**
 * Canonical system + messages → Chat Completions `messages`. Conversions keep text byte-exact;
 * empty text is never sent as a block of its own (hosts reject empty blocks).
 * Tool-call ids pass through `rewriteToolCallId` on both sides (assistant calls and tool results),
 * so a host-imposed id shape stays consistent between a call and its result.
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
} from "../../canonical/index.js";
import type { ToolCallIdRewriter } from "./rewrite-tool-call-id.js";
import type { ChatContentPart, ChatMessage, ChatToolCall } from "./wire-types.js";

export interface ConvertMessagesOptions {
  /** `developer` for OpenAI reasoning models, which take it in place of `system`. */
  systemRole: "system" | "developer";
  /** Whether replayed assistant turns carry their reasoning text (`reasoning` field). */
  includeReasoningText: boolean;
  rewriteToolCallId: ToolCallIdRewriter;
}

const DEFAULT_OPTIONS: ConvertMessagesOptions = {
  systemRole: "system",
  includeReasoningText: true,
  rewriteToolCallId: (id) => id,
};

export function convertMessages(
  system: TextPart[],
  messages: CanonicalMessage[],
  options: ConvertMessagesOptions = DEFAULT_OPTIONS,
): ChatMessage[] {
  const result: ChatMessage[] = [];
  const systemMessage = convertSystem(system, options.systemRole);
  if (systemMessage !== undefined) result.push(systemMessage);
  for (const message of messages) {
    // A turn of only blocks of another wire family (a Messages `search_result`) has nothing here.
    if (message.role !== "tool" && message.content.length === 0) continue;
    switch (message.role) {
      case "user":
        result.push(convertUserMessage(message.content, message.name));
        break;
      case "assistant":
        result.push(convertAssistantMessage(message.content, message.name, options));
        break;
      case "tool":
        // Chat wants one `tool` message per result.
        for (const part of message.content) result.push(convertToolResult(part, options.rewriteToolCallId));
        break;
    }
  }
  return result;
}

/**
 * One system message: a string for one part, text parts for several (joining them would invent
 * separators the caller never wrote).
 */
function convertSystem(system: TextPart[], role: "system" | "developer"): ChatMessage | undefined {
  const parts = system.filter((part) => part.text !== "");
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return { role, content: parts[0].text };
  return { role, content: parts.map((part) => ({ type: "text", text: part.text })) };
}

function convertUserMessage(content: UserContentPart[], name: string | undefined): ChatMessage {
  const nameField = name === undefined ? {} : { name };
  // A lone text part goes as a plain string: the shape every compatible host accepts.
  if (content.length === 1 && content[0].type === "text") {
    return { role: "user", content: content[0].text, ...nameField };
  }
  const parts = content.flatMap((part): ChatContentPart[] => {
    if (part.type === "image") return [convertImage(part)];
    if (part.type === "file") return [convertFile(part)];
    return part.text === "" ? [] : [{ type: "text", text: part.text }];
  });
  return { role: "user", content: parts, ...nameField };
}

function convertAssistantMessage(
  content: AssistantContentPart[],
  name: string | undefined,
  options: ConvertMessagesOptions,
): ChatMessage {
  let text = "";
  let reasoning = "";
  const toolCalls: ChatToolCall[] = [];
  for (const part of content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    // Opaque provider state (signatures, encrypted content, a provider's own tool records) has no
    // Chat field and is bound to the provider and model that produced it, so only calls travel.
    else if (part.type === "tool-call")
      toolCalls.push({
        id: options.rewriteToolCallId(part.id),
        type: "function",
        function: { name: part.name, arguments: part.arguments },
      });
  }
  // `content: null` with tool calls is the wire's own shape; an empty string would be an empty block.
  const message: ChatMessage = {
    role: "assistant",
    content: text !== "" ? text : toolCalls.length > 0 ? null : "",
    ...(name === undefined ? {} : { name }),
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    ...(reasoning !== "" && options.includeReasoningText ? { reasoning } : {}),
  };
  return message;
}

function convertToolResult(part: ToolResultPart, rewriteToolCallId: ToolCallIdRewriter): ChatMessage {
  const toolCallId = rewriteToolCallId(part.toolCallId);
  const allText = part.content.every((item) => item.type === "text");
  if (allText) {
    return {
      role: "tool",
      tool_call_id: toolCallId,
      content: part.content.map((item) => (item.type === "text" ? item.text : "")).join(""),
    };
  }
  const content = part.content.flatMap((item): ChatContentPart[] => {
    if (item.type === "image") return [convertImage(item)];
    return item.text === "" ? [] : [{ type: "text", text: item.text }];
  });
  return { role: "tool", tool_call_id: toolCallId, content };
}

function convertImage(part: ImagePart): ChatContentPart {
  return {
    type: "image_url",
    image_url: { url: toUrl(part.source), ...(part.detail === undefined ? {} : { detail: part.detail }) },
  };
}

/**
 * Chat's `file` part takes a data URL in `file_data`; a URL source is passed as is, which
 * compatible routers (OpenRouter among them) accept. `filename` is required by OpenAI.
 */
function convertFile(part: FilePart): ChatContentPart {
  return {
    type: "file",
    file: {
      filename: part.filename ?? part.title ?? defaultFilename(part.source),
      file_data: toUrl(part.source),
    },
  };
}

function toUrl(source: MediaSource): string {
  return source.kind === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

function defaultFilename(source: MediaSource): string {
  if (source.kind === "base64") {
    const subtype = /^[a-z]+\/([a-z0-9.+-]+)/i.exec(source.mediaType)?.[1];
    if (subtype !== undefined) return `file.${subtype === "plain" ? "txt" : subtype}`;
  }
  return "file";
}
