/**
 * Server-tool calls, their results and url citations → Anthropic's own transcript blocks, shared by
 * the response encoder and the stream encoder so a streamed and a non-streamed turn carry the same
 * blocks.
 *
 * - Only `web_search` and `web_fetch` have blocks: `server_tool_use.name` is a closed set in the
 *   Messages types (Anthropic's own server tools), so a `datetime`, `pdf` or `image` call renders
 *   nothing (its `hi.tool_event` frames, when asked for, still tell it happened).
 * - An image the `image` tool made is an `image` block with a base64 source where it was made:
 *   Claude has no image output block, and this is the shape the SDK's types already know (an
 *   input image), which `MessageStream` keeps as it comes. A failed generation has no block; the
 *   model's text says so. A replayed `image` block in an assistant turn is accepted and dropped.
 * - Wire ids are `srvtoolu_<call id>`, Anthropic's prefix for server-tool calls.
 * - `encrypted_content` and `encrypted_index` are opaque in Anthropic's API and required non-empty;
 *   the gateway puts base64url JSON there: the result's URL and the snippet the model read, and the
 *   cited span's URL and UTF-16 offsets (which `web_search_result_location` has no field for). The
 *   decoder drops both on replay; nothing depends on their content.
 */
import type { ServerToolCall, ServerToolId, ServerToolResult, UrlCitation } from "../../canonical/index.js";
import {
  mapWebFetchErrorCode,
  mapWebSearchErrorCode,
  type WebFetchErrorCode,
  type WebSearchErrorCode,
} from "./map-server-tool-error-code.js";

/** The tools Messages has blocks for, by name. */
export type MessagesServerToolName = "web_search" | "web_fetch";

export interface ServerToolUseBlock {
  type: "server_tool_use";
  id: string;
  name: MessagesServerToolName;
  input: Record<string, unknown>;
}

export interface WebSearchResultBlock {
  type: "web_search_result";
  url: string;
  title: string;
  encrypted_content: string;
  page_age: string | null;
}

export interface WebSearchToolResultBlock {
  type: "web_search_tool_result";
  tool_use_id: string;
  content: WebSearchResultBlock[] | { type: "web_search_tool_result_error"; error_code: WebSearchErrorCode };
}

export interface WebFetchToolResultBlock {
  type: "web_fetch_tool_result";
  tool_use_id: string;
  content:
    | {
        type: "web_fetch_result";
        url: string;
        retrieved_at: string;
        content: {
          type: "document";
          title: string | null;
          source: { type: "text"; media_type: "text/plain"; data: string };
        };
      }
    | { type: "web_fetch_tool_result_error"; error_code: WebFetchErrorCode };
}

export type ServerToolResultBlock = WebSearchToolResultBlock | WebFetchToolResultBlock;

/** An image the image tool made, as Anthropic's input image block. */
export interface GeneratedImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
}

export interface WebSearchResultLocation {
  type: "web_search_result_location";
  url: string;
  title: string;
  cited_text: string;
  encrypted_index: string;
}

/** The block name of a tool, or undefined when Messages has no block for it. */
export function serverToolBlockName(tool: ServerToolId): MessagesServerToolName | undefined {
  return tool === "web_search" || tool === "web_fetch" ? tool : undefined;
}

/**
 * The call's id as this format shows it: `srvtoolu_<id>` for a tool with blocks, the bare id for
 * the others (their only appearance is in `hi.tool_event` frames).
 */
export function serverToolWireId(tool: ServerToolId, callId: string): string {
  return serverToolBlockName(tool) === undefined ? callId : `srvtoolu_${callId}`;
}

export function encodeServerToolUseBlock(call: ServerToolCall): ServerToolUseBlock | undefined {
  const name = serverToolBlockName(call.tool);
  if (name === undefined) return undefined;
  return { type: "server_tool_use", id: serverToolWireId(call.tool, call.id), name, input: call.input };
}

/** The block that shows a call's result: a tool's result block, a generated image, or nothing. */
export function encodeServerToolResultBlock(
  result: ServerToolResult,
): ServerToolResultBlock | GeneratedImageBlock | undefined {
  const toolUseId = serverToolWireId(result.tool, result.callId);
  const output = result.output;
  if (result.tool === "image") {
    if (result.status !== "completed" || output?.kind !== "image") return undefined;
    return { type: "image", source: { type: "base64", media_type: output.mediaType, data: output.base64 } };
  }
  if (result.tool === "web_search") {
    const content: WebSearchToolResultBlock["content"] =
      result.status === "completed" && output?.kind === "search"
        ? output.sources.map((source) => ({
            type: "web_search_result",
            url: source.url,
            title: source.title,
            encrypted_content: encodeOpaqueToken({ url: source.url, snippet: source.snippet }),
            page_age: source.pageAge,
          }))
        : { type: "web_search_tool_result_error", error_code: mapWebSearchErrorCode(result.error?.code) };
    return { type: "web_search_tool_result", tool_use_id: toolUseId, content };
  }
  if (result.tool === "web_fetch") {
    const content: WebFetchToolResultBlock["content"] =
      result.status === "completed" && output?.kind === "fetch"
        ? {
            type: "web_fetch_result",
            url: output.finalUrl,
            retrieved_at: output.retrievedAt,
            content: {
              type: "document",
              title: output.title === "" ? null : output.title,
              source: { type: "text", media_type: "text/plain", data: output.text },
            },
          }
        : { type: "web_fetch_tool_result_error", error_code: mapWebFetchErrorCode(result.error?.code) };
    return { type: "web_fetch_tool_result", tool_use_id: toolUseId, content };
  }
  return undefined;
}

export function encodeCitation(citation: UrlCitation): WebSearchResultLocation {
  return {
    type: "web_search_result_location",
    url: citation.url,
    title: citation.title,
    cited_text: citation.citedText,
    encrypted_index: encodeOpaqueToken({
      url: citation.url,
      start_index: citation.startIndex,
      end_index: citation.endIndex,
    }),
  };
}

function encodeOpaqueToken(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}
