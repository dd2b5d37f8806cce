/**
 * OpenAI's records of the web search it ran itself (`web_search` sent as a native tool) →
 * canonical server-tool parts, shared by the JSON and the stream parsers:
 *
 * - a `web_search_call` item is one call and its result. Its action says what it did: `search`
 *   (the query, and the sources when `include` asked for them) is a web_search; `open_page` and
 *   `find_in_page` read one page, a web_fetch (OpenAI returns no text of it, so the page's text is
 *   empty). A status other than `completed` is a failed call.
 * - `url_citation` annotations of an `output_text` part → citations of the message's text, their
 *   offsets moved by where that part starts in it. Sources carry no title; a citation does.
 *
 * The item is kept verbatim, as JSON text, in the call's provider state: a later round of the same
 * turn sends it back, so the reasoning item before it still has its following item.
 */
import { randomUUID } from "node:crypto";
import type {
  NativeServerToolId,
  OpaqueReasoningState,
  ServerToolCall,
  ServerToolOutput,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import { RESPONSES_PROVIDER_KIND } from "./provider-kind.js";
import type { ResponsesContentWire, ResponsesOutputItemWire } from "./wire-types.js";

export const WEB_SEARCH_SOURCES_INCLUDE = "web_search_call.action.sources";

export interface WebSearchCallParts {
  call: ServerToolCall;
  providerState: OpaqueReasoningState;
  result: ServerToolResult;
}

/** A complete `web_search_call` item → its call (with the item as state) and its result. */
export function readWebSearchCall(item: ResponsesOutputItemWire, upstreamModel: string): WebSearchCallParts {
  const action = isRecord(item.action) ? item.action : {};
  const id = toCallId(item.id);
  const readsPage = action.type === "open_page" || action.type === "find_in_page";
  const tool: NativeServerToolId = readsPage ? "web_fetch" : "web_search";
  const input: Record<string, unknown> = {};
  if (readsPage) {
    if (typeof action.url === "string") input.url = action.url;
    if (typeof action.pattern === "string") input.pattern = action.pattern;
  } else {
    const query = readQuery(action);
    if (query !== "") input.query = query;
  }
  const call: ServerToolCall = { id, tool, input, events: false };
  const providerState: OpaqueReasoningState = {
    providerKind: RESPONSES_PROVIDER_KIND,
    upstreamModel,
    nativeBlock: JSON.stringify(item),
  };
  const base = { callId: id, tool, input, costMicroUsd: 0, durationMs: 0, events: false };
  const output = item.status === "completed" ? readOutput(action, readsPage) : undefined;
  const result: ServerToolResult =
    output === undefined
      ? {
          status: "failed",
          ...base,
          error: {
            code: "unavailable",
            message: `The provider's web search ended ${item.status ?? "without a status"}.`,
          },
        }
      : { status: "completed", ...base, output };
  return { call, providerState, result };
}

/** Citations of every output_text part of a message item, at their place in its joined text. */
export function readMessageCitations(item: ResponsesOutputItemWire, textLength: number): UrlCitation[] {
  const citations: UrlCitation[] = [];
  let offset = 0;
  for (const part of readRecords<ResponsesContentWire>(item.content)) {
    const text = part.type === "output_text" ? part.text : part.type === "refusal" ? part.refusal : undefined;
    if (typeof text !== "string") continue;
    if (part.type === "output_text")
      citations.push(...readUrlCitations(part.annotations, offset, textLength));
    offset += text.length;
  }
  return citations;
}

/** The `url_citation` annotations of one output_text part starting at `offset` in the message's text. */
export function readUrlCitations(annotations: unknown, offset: number, textLength: number): UrlCitation[] {
  const citations: UrlCitation[] = [];
  for (const annotation of readRecords<Record<string, unknown>>(annotations)) {
    const citation = readUrlCitation(annotation, offset, textLength);
    if (citation !== undefined) citations.push(citation);
  }
  return citations;
}

/** One annotation → a citation, when it is a `url_citation` whose span lies in the text. */
export function readUrlCitation(
  annotation: Record<string, unknown>,
  offset: number,
  textLength: number,
): UrlCitation | undefined {
  if (annotation.type !== "url_citation" || typeof annotation.url !== "string") return undefined;
  const start = annotation.start_index;
  const end = annotation.end_index;
  if (
    typeof start !== "number" ||
    typeof end !== "number" ||
    !Number.isInteger(start) ||
    !Number.isInteger(end)
  ) {
    return undefined;
  }
  const startIndex = offset + start;
  const endIndex = offset + end;
  if (start < 0 || end < start || endIndex > textLength) return undefined;
  return {
    url: annotation.url,
    title: readTitle(annotation.title, annotation.url),
    startIndex,
    endIndex,
    citedText: "",
  };
}

function readOutput(action: Record<string, unknown>, readsPage: boolean): ServerToolOutput {
  if (readsPage) {
    const url = typeof action.url === "string" ? action.url : "";
    return {
      kind: "fetch",
      url,
      finalUrl: url,
      title: readTitle(undefined, url),
      retrievedAt: new Date().toISOString(),
      contentType: "",
      bytes: 0,
      text: "",
      truncated: false,
    };
  }
  const sources = readRecords<Record<string, unknown>>(action.sources).flatMap((source) =>
    typeof source.url === "string"
      ? [{ url: source.url, title: readTitle(undefined, source.url), snippet: "", pageAge: null }]
      : [],
  );
  return { kind: "search", query: readQuery(action), sources };
}

/** `query`, else the first of `queries` (newer items carry both, older ones only one). */
function readQuery(action: Record<string, unknown>): string {
  if (typeof action.query === "string") return action.query;
  const queries = Array.isArray(action.queries) ? action.queries.filter((q) => typeof q === "string") : [];
  return queries.length > 0 ? (queries[0] as string) : "";
}

function readTitle(title: unknown, url: string): string {
  if (typeof title === "string" && title !== "") return title;
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** `ws_68c…` → `68c…` (the Responses encoder puts the prefix back); only letters, digits and `_`. */
function toCallId(id: unknown): string {
  if (typeof id !== "string" || id === "") return `gw${randomUUID().replaceAll("-", "")}`;
  const raw = id;
  return raw.replace(/^ws_/, "").replace(/[^A-Za-z0-9_]/g, "_");
}
