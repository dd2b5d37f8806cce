/**
 * Anthropic's records of the tools it ran itself (`web_search_*` / `web_fetch_*` sent as
 * `request.nativeServerTools`) → canonical server-tool calls, results and citations, shared by the
 * JSON and the stream parsers so both give the same parts:
 *
 * - `server_tool_use` → a call whose id is the block's without `srvtoolu_` (the Messages encoder
 *   puts the prefix back, so the caller sees Anthropic's own id);
 * - `web_search_tool_result` → a search result: each `web_search_result`'s URL, title and page age
 *   (the page's text is encrypted, so the snippet is empty); `web_fetch_tool_result` → a fetch
 *   result with the document's text; `*_tool_result_error` → a failed result with its code mapped;
 * - a text block's `web_search_result_location` citations → citations of the whole block (the
 *   API cites blocks, not spans), its `cited_text` kept.
 *
 * Every block is kept verbatim, as JSON text, in the part's provider state: the next call of the
 * turn (a paused turn, a later round) must send Anthropic its own blocks back, encrypted content
 * included. Blocks of tools the request did not send natively are not mapped.
 */
import { randomUUID } from "node:crypto";
import type {
  NativeServerToolId,
  OpaqueReasoningState,
  ServerToolCall,
  ServerToolErrorCode,
  ServerToolOutput,
  ServerToolResult,
  ServerToolSource,
  UrlCitation,
} from "../../canonical/index.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import { PROVIDER_KIND } from "./convert-messages.js";

/** What the parsers need to know about the tools the request sent natively. */
export interface ServerToolBlockContext {
  upstreamModel: string;
  /** The tools Anthropic was asked to run; blocks of others are skipped (absent: none). */
  nativeTools?: ReadonlySet<NativeServerToolId>;
}

/** Anthropic cuts `cited_text`; every format gets at most this much of it. */
const MAX_CITED_TEXT_CHARS = 150;

const RESULT_TOOLS: Readonly<Record<string, NativeServerToolId>> = {
  web_search_tool_result: "web_search",
  web_fetch_tool_result: "web_fetch",
};

const ERROR_CODES: Readonly<Record<string, ServerToolErrorCode>> = {
  invalid_tool_input: "invalid_input",
  query_too_long: "invalid_input",
  url_too_long: "invalid_input",
  request_too_large: "invalid_input",
  max_uses_exceeded: "max_uses_exceeded",
  too_many_requests: "too_many_requests",
  url_not_allowed: "url_not_allowed",
  url_not_in_prior_context: "url_not_allowed",
  url_not_accessible: "url_not_accessible",
  content_too_large: "url_not_accessible",
  unsupported_content_type: "unsupported_content_type",
  unavailable: "unavailable",
};

/** The tool a block records, when it is one the request sent natively. */
export function readServerToolBlockTool(
  block: Record<string, unknown>,
  context: ServerToolBlockContext,
): NativeServerToolId | undefined {
  const tool =
    block.type === "server_tool_use"
      ? block.name === "web_search" || block.name === "web_fetch"
        ? block.name
        : undefined
      : RESULT_TOOLS[String(block.type)];
  return tool !== undefined && context.nativeTools?.has(tool) === true ? tool : undefined;
}

/** A complete `server_tool_use` block (its `input` whole) → the call and its record. */
export function readServerToolUse(
  block: Record<string, unknown>,
  tool: NativeServerToolId,
  context: ServerToolBlockContext,
): { call: ServerToolCall; providerState: OpaqueReasoningState } {
  const call: ServerToolCall = {
    id: toCallId(block.id),
    tool,
    input: isRecord(block.input) ? block.input : {},
    events: false,
  };
  return { call, providerState: createBlockState(block, context) };
}

/**
 * A `web_search_tool_result` / `web_fetch_tool_result` block → the result and its record. `input`
 * is the call's when this response made it (a paused turn's last call is answered in the next one).
 */
export function readServerToolResult(
  block: Record<string, unknown>,
  tool: NativeServerToolId,
  input: Record<string, unknown> | undefined,
  context: ServerToolBlockContext,
): { result: ServerToolResult; providerState: OpaqueReasoningState } {
  const callInput = input ?? {};
  const base = {
    callId: toCallId(block.tool_use_id),
    tool,
    input: callInput,
    costMicroUsd: 0,
    durationMs: 0,
    events: false,
  };
  const providerState = createBlockState(block, context);
  const content = block.content;
  const errorCode =
    isRecord(content) && typeof content.error_code === "string" ? content.error_code : undefined;
  const output =
    errorCode === undefined
      ? tool === "web_search"
        ? readSearchOutput(content, callInput)
        : readFetchOutput(content, callInput)
      : undefined;
  if (output === undefined) {
    const code = ERROR_CODES[errorCode ?? ""] ?? "unavailable";
    const result: ServerToolResult = {
      status: "failed",
      ...base,
      error: { code, message: `The provider's ${tool} failed (${errorCode ?? "no result"}).` },
    };
    return { result, providerState };
  }
  return { result: { status: "completed", ...base, output }, providerState };
}

/** The `web_search_result_location` citations of a text block, each citing the whole block. */
/**
 * The citations of a text block of `textLength` UTF-16 units: Anthropic's citation has no offsets,
 * so each one cites the whole block.
 */
export function readBlockCitations(citations: unknown, textLength: number): UrlCitation[] {
  if (textLength === 0) return [];
  const out: UrlCitation[] = [];
  for (const citation of readRecords<Record<string, unknown>>(citations)) {
    if (citation.type !== "web_search_result_location" || typeof citation.url !== "string") continue;
    out.push({
      url: citation.url,
      title: readTitle(citation.title, citation.url),
      startIndex: 0,
      endIndex: textLength,
      citedText:
        typeof citation.cited_text === "string" ? citation.cited_text.slice(0, MAX_CITED_TEXT_CHARS) : "",
    });
  }
  return out;
}

function readSearchOutput(content: unknown, input: Record<string, unknown>): ServerToolOutput | undefined {
  if (!Array.isArray(content)) return undefined;
  const sources: ServerToolSource[] = [];
  for (const item of readRecords<Record<string, unknown>>(content)) {
    if (item.type !== "web_search_result" || typeof item.url !== "string") continue;
    sources.push({
      url: item.url,
      title: readTitle(item.title, item.url),
      snippet: "",
      pageAge: typeof item.page_age === "string" && item.page_age !== "" ? item.page_age : null,
    });
  }
  return { kind: "search", query: typeof input.query === "string" ? input.query : "", sources };
}

function readFetchOutput(content: unknown, input: Record<string, unknown>): ServerToolOutput | undefined {
  if (!isRecord(content) || content.type !== "web_fetch_result" || typeof content.url !== "string") {
    return undefined;
  }
  const document = isRecord(content.content) ? content.content : {};
  const source = isRecord(document.source) ? document.source : {};
  const data = typeof source.data === "string" ? source.data : "";
  // A PDF comes back as base64 bytes; the model read it, the caller gets no text of it.
  const isText = source.type === "text";
  return {
    kind: "fetch",
    url: typeof input.url === "string" ? input.url : content.url,
    finalUrl: content.url,
    title: readTitle(document.title, content.url),
    retrievedAt: typeof content.retrieved_at === "string" ? content.retrieved_at : new Date().toISOString(),
    contentType: typeof source.media_type === "string" ? source.media_type : "",
    bytes: isText ? Buffer.byteLength(data, "utf8") : Math.floor((data.length * 3) / 4),
    text: isText ? data : "",
    truncated: false,
  };
}

/** A title, or the URL's host when there is none (a source's title is never empty). */
function readTitle(title: unknown, url: string): string {
  if (typeof title === "string" && title !== "") return title;
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** `srvtoolu_01Ab…` → `01Ab…`; anything outside letters, digits and `_` becomes `_`. */
function toCallId(id: unknown): string {
  if (typeof id !== "string" || id === "") return `gw${randomUUID().replaceAll("-", "")}`;
  const raw = id;
  return raw.replace(/^srvtoolu_/, "").replace(/[^A-Za-z0-9_]/g, "_");
}

function createBlockState(
  block: Record<string, unknown>,
  context: ServerToolBlockContext,
): OpaqueReasoningState {
  return {
    providerKind: PROVIDER_KIND,
    upstreamModel: context.upstreamModel,
    nativeBlock: JSON.stringify(block),
  };
}
