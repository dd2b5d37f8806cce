/**
 * Canonical server-tool failure codes → the `error_code` vocabularies of Anthropic's
 * `web_search_tool_result_error` and `web_fetch_tool_result_error`. One table per tool, so the
 * response and the stream cannot disagree.
 *
 * - `budget_exhausted` (the key or workspace cannot pay for the call) is `unavailable`: the tool
 *   cannot be used now, which is what a client can act on; the `hi.tool_event` frame keeps the
 *   exact reason.
 * - A search has no URL of its own, so the URL codes cannot occur for it; if they ever did, the
 *   backend could not be used: `unavailable`.
 * - A failure without a code (never expected) is `unavailable`.
 */
import type { ServerToolErrorCode } from "../../canonical/index.js";

export type WebSearchErrorCode =
  | "invalid_tool_input"
  | "unavailable"
  | "max_uses_exceeded"
  | "too_many_requests"
  | "query_too_long"
  | "request_too_large";

export type WebFetchErrorCode =
  | "invalid_tool_input"
  | "url_too_long"
  | "url_not_allowed"
  | "url_not_accessible"
  | "unsupported_content_type"
  | "too_many_requests"
  | "max_uses_exceeded"
  | "unavailable";

export const WEB_SEARCH_ERROR_CODES: Readonly<Record<ServerToolErrorCode, WebSearchErrorCode>> = {
  invalid_input: "invalid_tool_input",
  max_uses_exceeded: "max_uses_exceeded",
  budget_exhausted: "unavailable",
  unavailable: "unavailable",
  too_many_requests: "too_many_requests",
  url_not_allowed: "unavailable",
  url_not_accessible: "unavailable",
  unsupported_content_type: "unavailable",
};

export const WEB_FETCH_ERROR_CODES: Readonly<Record<ServerToolErrorCode, WebFetchErrorCode>> = {
  invalid_input: "invalid_tool_input",
  max_uses_exceeded: "max_uses_exceeded",
  budget_exhausted: "unavailable",
  unavailable: "unavailable",
  too_many_requests: "too_many_requests",
  url_not_allowed: "url_not_allowed",
  url_not_accessible: "url_not_accessible",
  unsupported_content_type: "unsupported_content_type",
};

export function mapWebSearchErrorCode(code: ServerToolErrorCode | undefined): WebSearchErrorCode {
  return code === undefined ? "unavailable" : WEB_SEARCH_ERROR_CODES[code];
}

export function mapWebFetchErrorCode(code: ServerToolErrorCode | undefined): WebFetchErrorCode {
  return code === undefined ? "unavailable" : WEB_FETCH_ERROR_CODES[code];
}
