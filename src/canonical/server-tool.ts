/**
 * What a server tool did inside a run, in the form every ingress format renders: the call the
 * model made, its result (sources found, a page read, or why it failed), and the citations the
 * answer's text makes to those sources. The engine's tool loop produces these; encoders draw them
 * as their format's native blocks, items or annotations, and as `hi.tool_event` frames when asked.
 */
import type { ServerToolId } from "./request.js";

/** A server-tool call the model made. */
export interface ServerToolCall {
  /**
   * Unique within the response; letters, digits and `_` only. Encoders derive their wire ids from
   * it (`srvtoolu_<id>` in Messages, `ws_<id>` and `ig_<id>` in Responses) and use it as is elsewhere.
   */
  id: string;
  tool: ServerToolId;
  /** The model's arguments, parsed (`{query}`, `{url}`, `{timezone, time}`, `{prompt, size}`); `{}` when unreadable. */
  input: Record<string, unknown>;
  /** `hi.tool_event` frames are wanted for this call (the tool's `events` or `hi_tool_events`). */
  events: boolean;
}

/** A page a search found or a fetch read. */
export interface ServerToolSource {
  url: string;
  /** Never empty (the host when the page has no title). */
  title: string;
  /** Plain-text excerpt (a search snippet); may be empty. */
  snippet: string;
  /** How old the page is, as free text (`2 days ago`, `2026-03-01`); null when unknown. */
  pageAge: string | null;
}

/** What a completed call produced, by the kind of tool. */
export type ServerToolOutput =
  | { kind: "search"; query: string; sources: ServerToolSource[] }
  | {
      kind: "fetch";
      /** The URL asked for, and the one finally read (after redirects). */
      url: string;
      finalUrl: string;
      title: string;
      /** ISO 8601 UTC. */
      retrievedAt: string;
      contentType: string;
      /** Bytes read (after decompression). */
      bytes: number;
      /** The text the model was given (markdown of the page's main content, or the text as served). */
      text: string;
      truncated: boolean;
    }
  | { kind: "datetime"; utc: string; timezones: string[] }
  | {
      kind: "image";
      /** The image file, base64 without a data-URL prefix; it goes to the client, never to the model. */
      base64: string;
      /** Read from the image's own bytes: `image/png`, `image/jpeg`, `image/webp` or `image/gif`. */
      mediaType: string;
      /** `<width>x<height>`: the pixels read from the image, else the size asked for. */
      size: string;
      /** The prompt as the provider rewrote it, or the text it sent with the image. */
      revisedPrompt?: string;
      /** The configured image provider (its id) that made it, and its model. */
      provider: string;
      model: string;
    };

/**
 * Why a call failed, in one vocabulary for every tool (encoders map it to their format's codes):
 * - `invalid_input`: the model's arguments cannot be used (missing query, malformed URL);
 * - `max_uses_exceeded`: the tool's `max_uses` (or Responses `max_tool_calls`) was reached;
 * - `budget_exhausted`: the key's or workspace's remaining spend cannot pay for it;
 * - `unavailable`: the backend failed (deadline, network, HTTP error, unreadable answer);
 * - `too_many_requests`: the backend refused for rate;
 * - `url_not_allowed`: web_fetch refused the destination (scheme, port, private address);
 * - `url_not_accessible`: web_fetch could not read it (DNS, connection, HTTP status, too large);
 * - `unsupported_content_type`: web_fetch read a type it does not convert.
 */
export type ServerToolErrorCode =
  | "invalid_input"
  | "max_uses_exceeded"
  | "budget_exhausted"
  | "unavailable"
  | "too_many_requests"
  | "url_not_allowed"
  | "url_not_accessible"
  | "unsupported_content_type";

export interface ServerToolResult {
  /** The `ServerToolCall.id` this answers. */
  callId: string;
  tool: ServerToolId;
  /** The call's input again, so a result renders (and its event reads) on its own. */
  input: Record<string, unknown>;
  status: "completed" | "failed";
  /** Set when `completed`. */
  output?: ServerToolOutput;
  /** Set when `failed`: the code, and one sentence safe to show (no configuration detail). */
  error?: { code: ServerToolErrorCode; message: string };
  /** What the call is billed (0 for a failed call). */
  costMicroUsd: number;
  durationMs: number;
  /** As on the call. */
  events: boolean;
}

/**
 * A span of an answer's text that cites a source. Offsets are UTF-16 code units into the text of
 * one text block (the stream's text id, or one `text` entry of a result), `endIndex` exclusive.
 */
export interface UrlCitation {
  url: string;
  title: string;
  startIndex: number;
  endIndex: number;
  /** The source's text the span rests on (its snippet, at most 150 characters); may be empty. */
  citedText: string;
}

/** How many calls of each server tool a run executed (failed ones included), for usage counters. */
export type ServerToolCounts = Partial<Record<ServerToolId, number>>;
