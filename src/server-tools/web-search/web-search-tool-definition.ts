/**
 * The web_search tool as the model sees it, and the reading of the model's arguments. The model
 * picks the query, and optionally a result count and domain filters; everything else (context
 * size, location, the caller's own domain filters) comes from the request's activation.
 */
import type { FunctionTool } from "../../canonical/index.js";
import { normalizeDomain } from "./domain-filter.js";
import { MAX_QUERY_CHARS } from "./plan-search.js";

export const WEB_SEARCH_TOOL_NAME = "web_search";

/** Longest domain list accepted from the model or a request (Tavily takes at most 150 exclusions). */
export const MAX_DOMAIN_ENTRIES = 100;

export function createWebSearchToolDefinition(maxResultCount: number): FunctionTool {
  const domainList = (what: string) => ({
    type: "array",
    items: { type: "string" },
    maxItems: MAX_DOMAIN_ENTRIES,
    description: `${what} Write domains without a scheme ("example.com"); subdomains are included.`,
  });
  return {
    name: WEB_SEARCH_TOOL_NAME,
    description:
      "Search the web for current information. Returns the most relevant pages, each with its title, " +
      "URL, date when known and a snippet. Use it for facts that may have changed or that you do not " +
      "know. Cite each page you use as a markdown link to its URL, e.g. [example.com](https://example.com/a).",
    parameters: {
      type: "object",
      properties: {
        query: {
          type: "string",
          description: `What to search for, as you would type it into a search engine (at most ${MAX_QUERY_CHARS} characters).`,
        },
        count: {
          type: "integer",
          minimum: 1,
          maximum: maxResultCount,
          description: "How many results to return. Default: a few, set by the request.",
        },
        allowed_domains: domainList("Only return results from these domains."),
        blocked_domains: domainList("Never return results from these domains."),
      },
      required: ["query"],
      additionalProperties: false,
    },
  };
}

export interface WebSearchToolInput {
  query: string;
  count?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
}

export type ParseWebSearchToolInputResult =
  | { ok: true; input: WebSearchToolInput }
  /** `message` is written for the model: it becomes the tool result, so the model can retry. */
  | { ok: false; message: string };

/**
 * Reads the model's arguments (JSON text, as tool calls carry them, or already parsed). Lenient
 * where models are sloppy (a count written as "5", one domain written as a string, unknown extra
 * keys); strict where a wrong guess would search the wrong thing.
 */
export function parseWebSearchToolInput(input: string | unknown): ParseWebSearchToolInputResult {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      return { ok: false, message: 'The arguments are not valid JSON; send {"query": "…"}.' };
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: 'The arguments must be a JSON object such as {"query": "…"}.' };
  }
  const args = value as Record<string, unknown>;
  if (typeof args.query !== "string" || args.query.trim() === "") {
    return { ok: false, message: 'The "query" argument is required and must be a non-empty string.' };
  }
  const parsed: WebSearchToolInput = { query: args.query };
  if (args.count !== undefined && args.count !== null) {
    const count =
      typeof args.count === "string" && /^\d+$/.test(args.count.trim()) ? Number(args.count) : args.count;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1) {
      return { ok: false, message: 'The "count" argument must be a positive integer.' };
    }
    parsed.count = count;
  }
  for (const [field, key] of [
    ["allowed_domains", "allowedDomains"],
    ["blocked_domains", "blockedDomains"],
  ] as const) {
    const domains = readDomainList(args[field]);
    if (typeof domains === "string") return { ok: false, message: `The "${field}" argument ${domains}` };
    if (domains.length > 0) parsed[key] = domains;
  }
  return { ok: true, input: parsed };
}

/** Normalised domains, or a description of what is wrong (completing "The "x" argument …"). */
export function readDomainList(value: unknown): string[] | string {
  if (value === undefined || value === null) return [];
  const entries = typeof value === "string" ? [value] : value;
  if (!Array.isArray(entries)) return "must be an array of domain names.";
  if (entries.length > MAX_DOMAIN_ENTRIES) return `has more than ${MAX_DOMAIN_ENTRIES} entries.`;
  const domains: string[] = [];
  for (const entry of entries) {
    const domain = typeof entry === "string" ? normalizeDomain(entry) : null;
    if (domain === null) {
      return `has an entry that is not a domain name: ${JSON.stringify(entry)?.slice(0, 80)}.`;
    }
    if (!domains.includes(domain)) domains.push(domain);
  }
  return domains;
}
