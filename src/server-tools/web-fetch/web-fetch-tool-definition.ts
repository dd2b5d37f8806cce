/**
 * web_fetch as the model sees it: the function tool offered to the model when a request activates
 * web_fetch, and the reading of the arguments the model sends back. The model chooses only the URL;
 * caps come from the gateway's configuration and the caller's activation.
 */
import type { FunctionTool } from "../../canonical/request.js";
import { MAX_URL_LENGTH } from "./check-fetch-url.js";

export const WEB_FETCH_TOOL_NAME = "web_fetch";

export const WEB_FETCH_TOOL_DEFINITION: FunctionTool = {
  name: WEB_FETCH_TOOL_NAME,
  description:
    "Fetch a web page or document by URL and return its main content as markdown text (HTML pages), " +
    "as is (plain text and JSON), or as its text with page markers (PDF). Use it to read a page the " +
    "user gave you or one found by a web search. Only public http(s) URLs are fetched; private, local " +
    "and non-web addresses are refused. Long content is truncated. Cite what you use as a markdown " +
    "link to its URL.",
  parameters: {
    type: "object",
    properties: {
      url: {
        type: "string",
        description: "The absolute http:// or https:// URL to fetch.",
        maxLength: MAX_URL_LENGTH,
      },
    },
    required: ["url"],
    additionalProperties: false,
  },
};

export type WebFetchArguments = { ok: true; url: string } | { ok: false; message: string };

/**
 * The model's arguments (the JSON text of its tool call, or already parsed). Malformed arguments are
 * a result for the model, not an error of the request.
 */
export function readWebFetchArguments(raw: string | unknown): WebFetchArguments {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, message: 'Invalid arguments: expected a JSON object like {"url": "https://…"}.' };
    }
  }
  const url = (value as { url?: unknown } | null)?.url;
  if (typeof value !== "object" || value === null || typeof url !== "string" || url.trim() === "") {
    return { ok: false, message: 'Invalid arguments: "url" must be a non-empty string.' };
  }
  return { ok: true, url: url.trim() };
}
