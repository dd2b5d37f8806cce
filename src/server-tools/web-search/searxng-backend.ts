/**
 * SearXNG, the search backend a team can run itself: `GET <base_url>/search?q=…&format=json`.
 * The instance must list `json` under `search.formats` in its settings.yml (else it answers 403).
 * It has no count, location or domain parameters: one page of results comes back, already ordered
 * by score; the gateway keeps the first `count` that pass the domain filters, and a single allowed
 * domain also goes into the query as `site:` (engines such as Google, Bing and DuckDuckGo honour it).
 */
import type { RawSearchResult } from "./compact-search-results.js";
import {
  addSiteOperator,
  createSearchBackend,
  joinUrl,
  pickErrorText,
  readResultArray,
  type SearchBackendDependencies,
  type SearchBackendSettings,
  type SearchProtocol,
} from "./create-search-backend.js";
import { MAX_QUERY_CHARS } from "./plan-search.js";
import type { SearchBackend } from "./search-types.js";

export interface SearxngOptions {
  /** Request header carrying the key from `api_key_env` verbatim (e.g. `Authorization: Bearer …`). */
  authHeader: string;
  /** `categories` parameter (comma list); default `general`. */
  categories: readonly string[];
  /** `language` parameter (`en`, `fr-FR`, `all`); unset: the instance's default. */
  language?: string;
  /** `safesearch` parameter: 0 off, 1 moderate, 2 strict; unset: the instance's default. */
  safesearch?: 0 | 1 | 2;
}

const searxngProtocol: SearchProtocol<SearxngOptions> = {
  kind: "searxng",
  label: "SearXNG",
  requiresKey: false,
  buildCall(plan, settings, options) {
    const url = joinUrl(settings.baseUrl, "/search");
    url.searchParams.set("q", addSiteOperator(plan.query, plan.allowedDomains, MAX_QUERY_CHARS));
    url.searchParams.set("format", "json");
    url.searchParams.set("pageno", "1");
    if (options.categories.length > 0) url.searchParams.set("categories", options.categories.join(","));
    if (options.language !== undefined) url.searchParams.set("language", options.language);
    if (options.safesearch !== undefined) url.searchParams.set("safesearch", String(options.safesearch));
    const headers: Record<string, string> = { accept: "application/json" };
    if (settings.apiKey) headers[options.authHeader.toLowerCase()] = settings.apiKey;
    return { url, method: "GET", headers };
  },
  readResults(json) {
    return (
      readResultArray(json)?.map((item): RawSearchResult => {
        const result = (item ?? {}) as Record<string, unknown>;
        return {
          title: result.title,
          url: result.url,
          snippets: [result.content],
          date: result.publishedDate,
        };
      }) ?? null
    );
  },
  explainStatus(status, errorBody) {
    if (status === 403) {
      return "JSON output is not enabled on this instance (add json to search.formats in its settings.yml), or it refused the credentials.";
    }
    if (status === 429)
      return "the instance's bot limiter refused the request (disable limiter or allow this gateway).";
    return pickErrorText(errorBody, [["error"]]);
  },
};

export function createSearxngBackend(
  settings: SearchBackendSettings,
  options: SearxngOptions,
  dependencies: SearchBackendDependencies,
): SearchBackend {
  return createSearchBackend(searxngProtocol, settings, options, dependencies);
}
