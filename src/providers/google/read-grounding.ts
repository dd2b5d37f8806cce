/**
 * Gemini's records of the tools it ran itself (`googleSearch`, `urlContext`, sent for the
 * request's native web_search and web_fetch) → canonical server-tool parts and citations.
 *
 * Gemini reports them per candidate, not per call, and only once (a stream's last chunk carries
 * them; earlier chunks have an empty `groundingMetadata`):
 * - `groundingMetadata.webSearchQueries`: each query is one web_search call. Gemini does not say
 *   which query found which page, so the pages (`groundingChunks`, Google's redirect links with
 *   the site as title) are the first query's results and the others have none.
 * - `urlContextMetadata.urlMetadata`: each URL read is one web_fetch call, failed unless its
 *   status is `URL_RETRIEVAL_STATUS_SUCCESS`. Gemini returns no text of the page.
 * - `groundingSupports`: a segment of the answer resting on chunks → one citation per chunk.
 *   Segments are UTF-8 byte offsets into the answer's text; they become UTF-16 offsets into the
 *   text block they fall in (checked against the segment's own text when it has one).
 * Nothing is kept as provider state: Gemini takes none of it back.
 */
import type {
  ServerToolCall,
  ServerToolErrorCode,
  ServerToolResult,
  ServerToolSource,
  UrlCitation,
} from "../../canonical/index.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import { createToolCallId } from "./create-tool-call-id.js";

export interface GroundingCall {
  call: ServerToolCall;
  result: ServerToolResult;
}

const URL_STATUS_ERRORS: Readonly<Record<string, ServerToolErrorCode>> = {
  URL_RETRIEVAL_STATUS_UNSAFE: "url_not_allowed",
  URL_RETRIEVAL_STATUS_PAYWALL: "url_not_accessible",
  URL_RETRIEVAL_STATUS_ERROR: "url_not_accessible",
};

/** Whether a metadata object says anything (streams send `{}` until the last chunk). */
export function hasMetadata(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Object.keys(value).length > 0;
}

/** The searches of `groundingMetadata` as calls with their results. */
export function readSearchCalls(grounding: Record<string, unknown>): GroundingCall[] {
  const queries = Array.isArray(grounding.webSearchQueries)
    ? grounding.webSearchQueries.filter((query): query is string => typeof query === "string" && query !== "")
    : [];
  const sources = readSources(grounding);
  return queries.map((query, position) => {
    const id = toCallId();
    const input = { query };
    return {
      call: { id, tool: "web_search", input, events: false },
      result: {
        callId: id,
        tool: "web_search",
        input,
        status: "completed",
        output: { kind: "search", query, sources: position === 0 ? sources : [] },
        costMicroUsd: 0,
        durationMs: 0,
        events: false,
      },
    };
  });
}

/** The URLs `urlContextMetadata` says were read, as web_fetch calls with their results. */
export function readUrlContextCalls(metadata: Record<string, unknown>): GroundingCall[] {
  return readRecords<Record<string, unknown>>(metadata.urlMetadata ?? metadata.url_metadata).flatMap(
    (entry): GroundingCall[] => {
      const url = entry.retrievedUrl ?? entry.retrieved_url;
      if (typeof url !== "string" || url === "") return [];
      const status = String(entry.urlRetrievalStatus ?? entry.url_retrieval_status ?? "");
      const id = toCallId();
      const input = { url };
      const base = {
        callId: id,
        tool: "web_fetch" as const,
        input,
        costMicroUsd: 0,
        durationMs: 0,
        events: false,
      };
      const result: ServerToolResult =
        status === "URL_RETRIEVAL_STATUS_SUCCESS"
          ? {
              status: "completed",
              ...base,
              output: {
                kind: "fetch",
                url,
                finalUrl: url,
                title: readTitle(undefined, url),
                retrievedAt: new Date().toISOString(),
                contentType: "",
                bytes: 0,
                text: "",
                truncated: false,
              },
            }
          : {
              status: "failed",
              ...base,
              error: {
                code: URL_STATUS_ERRORS[status] ?? "unavailable",
                message: `The provider could not read the page (${status || "no status"}).`,
              },
            };
      return [{ call: { id, tool: "web_fetch", input, events: false }, result }];
    },
  );
}

/**
 * The citations of a text block that starts at `blockStart` (UTF-16) in the answer's `text`: the
 * supports whose segments lie inside it, one citation per grounding chunk they rest on.
 */
export function readSupportCitations(
  grounding: Record<string, unknown>,
  text: string,
  blockStart: number,
): UrlCitation[] {
  const chunks = readRecords<Record<string, unknown>>(grounding.groundingChunks);
  const supports = readRecords<Record<string, unknown>>(grounding.groundingSupports);
  if (chunks.length === 0 || supports.length === 0) return [];
  const offsets = createUtf8ToUtf16(text);
  const citations: UrlCitation[] = [];
  for (const support of supports) {
    const segment = isRecord(support.segment) ? support.segment : {};
    const span = locateSegment(segment, text, offsets);
    if (span === undefined || span.start < blockStart) continue;
    const indices = Array.isArray(support.groundingChunkIndices) ? support.groundingChunkIndices : [];
    for (const index of indices) {
      const web = typeof index === "number" && isRecord(chunks[index]?.web) ? chunks[index].web : undefined;
      if (!isRecord(web) || typeof web.uri !== "string") continue;
      citations.push({
        url: web.uri,
        title: readTitle(web.title, web.uri),
        startIndex: span.start - blockStart,
        endIndex: span.end - blockStart,
        citedText: "",
      });
    }
  }
  return citations;
}

function readSources(grounding: Record<string, unknown>): ServerToolSource[] {
  return readRecords<Record<string, unknown>>(grounding.groundingChunks).flatMap((chunk) => {
    const web = isRecord(chunk.web) ? chunk.web : undefined;
    if (web === undefined || typeof web.uri !== "string") return [];
    return [{ url: web.uri, title: readTitle(web.title, web.uri), snippet: "", pageAge: null }];
  });
}

/**
 * A segment's UTF-16 span in `text`: from its byte offsets (`startIndex` is left out when 0), or,
 * when those do not give the segment's own text, where that text first occurs.
 */
function locateSegment(
  segment: Record<string, unknown>,
  text: string,
  toUtf16: (byteOffset: number) => number | undefined,
): { start: number; end: number } | undefined {
  const startByte = typeof segment.startIndex === "number" ? segment.startIndex : 0;
  const endByte = segment.endIndex;
  const start = toUtf16(startByte);
  const end = typeof endByte === "number" ? toUtf16(endByte) : undefined;
  const expected = typeof segment.text === "string" && segment.text !== "" ? segment.text : undefined;
  if (start !== undefined && end !== undefined && end > start) {
    if (expected === undefined || text.slice(start, end) === expected) return { start, end };
  }
  if (expected === undefined) return undefined;
  const found = text.indexOf(expected);
  return found === -1 ? undefined : { start: found, end: found + expected.length };
}

/** Maps UTF-8 byte offsets of `text` to UTF-16 indices (undefined inside a character or past the end). */
function createUtf8ToUtf16(text: string): (byteOffset: number) => number | undefined {
  const byIndex = new Map<number, number>();
  let bytes = 0;
  let index = 0;
  byIndex.set(0, 0);
  for (const character of text) {
    const point = character.codePointAt(0) ?? 0;
    bytes += point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    index += character.length;
    byIndex.set(bytes, index);
  }
  return (byteOffset) => byIndex.get(byteOffset);
}

function readTitle(title: unknown, url: string): string {
  if (typeof title === "string" && title !== "") return title;
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** Gemini gives these calls no ids: `gs` + a generated call id's random letters and digits. */
function toCallId(): string {
  return createToolCallId().replace(/^call_/, "gs");
}
