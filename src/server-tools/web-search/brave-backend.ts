/**
 * Brave Search API: `GET <base_url>/res/v1/web/search` with `X-Subscription-Token`. The country
 * goes in `country` when Brave serves it (else `country=ALL`), and the whole location in Brave's
 * `X-Loc-*` headers; `high` context asks for `extra_snippets`. Brave has no domain parameters: a
 * single allowed domain goes into the query as `site:`, and when results must be filtered
 * afterwards the call asks for Brave's maximum of 20 so enough survive.
 */
import type { RawSearchResult } from "./compact-search-results.js";
import {
  addSiteOperator,
  createSearchBackend,
  joinUrl,
  needsResultFiltering,
  pickErrorText,
  type SearchBackendDependencies,
  type SearchBackendSettings,
  type SearchProtocol,
} from "./create-search-backend.js";
import { MAX_QUERY_CHARS, MAX_RESULT_COUNT } from "./plan-search.js";
import type { SearchBackend, SearchUserLocation } from "./search-types.js";

export interface BraveOptions {
  /** `safesearch` parameter; unset: Brave's default (`moderate`). */
  safesearch?: "off" | "moderate" | "strict";
}

/** The `country` values Brave's web search accepts (its "country codes" table); others → `ALL`. */
// biome-ignore format: one table
export const BRAVE_COUNTRIES = new Set([
  "AR", "AU", "AT", "BE", "BR", "CA", "CL", "DK", "FI", "FR", "DE", "HK", "IN", "ID", "IT", "JP", "KR", "MY",
  "MX", "NL", "NZ", "NO", "CN", "PL", "PT", "PH", "RU", "SA", "ZA", "ES", "SE", "CH", "TW", "TR", "GB", "US",
]);

const braveProtocol: SearchProtocol<BraveOptions> = {
  kind: "brave",
  label: "Brave Search",
  requiresKey: true,
  buildCall(plan, settings, options) {
    const url = joinUrl(settings.baseUrl, "/res/v1/web/search");
    const query = addSiteOperator(plan.query, plan.allowedDomains, MAX_QUERY_CHARS);
    // Without `site:` (several domains, a path, no room left in the query) the filter runs afterwards.
    const filteredAfterwards =
      needsResultFiltering(plan) || (plan.allowedDomains.length > 0 && query === plan.query);
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(filteredAfterwards ? MAX_RESULT_COUNT : plan.count));
    url.searchParams.set("result_filter", "web");
    url.searchParams.set("text_decorations", "false");
    const country = plan.userLocation?.country;
    if (country !== undefined)
      url.searchParams.set("country", BRAVE_COUNTRIES.has(country) ? country : "ALL");
    if (options.safesearch !== undefined) url.searchParams.set("safesearch", options.safesearch);
    if (plan.contextSize === "high") url.searchParams.set("extra_snippets", "true");
    return {
      url,
      method: "GET",
      headers: {
        accept: "application/json",
        "x-subscription-token": settings.apiKey ?? "",
        ...buildLocationHeaders(plan.userLocation),
      },
    };
  },
  readResults(json) {
    if (json === null || typeof json !== "object" || (json as { type?: unknown }).type !== "search")
      return null;
    const { web } = json as { web?: unknown };
    // No `web` section is Brave's way of saying "no web results".
    if (web === undefined) return [];
    const results =
      web !== null && typeof web === "object" ? (web as { results?: unknown }).results : undefined;
    if (!Array.isArray(results)) return null;
    return results.map((item): RawSearchResult => {
      const result = (item ?? {}) as Record<string, unknown>;
      const extra = Array.isArray(result.extra_snippets) ? result.extra_snippets : [];
      return {
        title: result.title,
        url: result.url,
        snippets: [result.description, ...extra],
        date: result.page_age,
        ageText: result.age,
      };
    });
  },
  explainStatus(status, errorBody) {
    const detail = pickErrorText(errorBody, [["error", "detail"], ["message"]]);
    if (status === 401 || status === 403)
      return `the subscription token was refused${detail ? ` (${detail})` : "."}`;
    if (status === 429) return `rate limit reached${detail ? ` (${detail})` : "."}`;
    return detail;
  },
};

/** Brave's `X-Loc-*` headers; values must be ASCII, so accents are folded and other text is left out. */
function buildLocationHeaders(location: SearchUserLocation | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (location === undefined) return headers;
  const put = (name: string, value: string | undefined) => {
    const ascii = value === undefined ? undefined : toHeaderText(value);
    if (ascii) headers[name] = ascii;
  };
  put("x-loc-country", location.country);
  put("x-loc-city", location.city);
  put("x-loc-state-name", location.region);
  if (location.region !== undefined && /^[A-Za-z0-9]{1,3}$/.test(location.region)) {
    put("x-loc-state", location.region.toUpperCase());
  }
  put("x-loc-timezone", location.timezone);
  return headers;
}

function toHeaderText(value: string): string | undefined {
  const folded = value.normalize("NFD").replace(/\p{M}/gu, "").trim();
  return /^[\x20-\x7e]{1,100}$/.test(folded) ? folded : undefined;
}

export function createBraveBackend(
  settings: SearchBackendSettings,
  options: BraveOptions,
  dependencies: SearchBackendDependencies,
): SearchBackend {
  return createSearchBackend(braveProtocol, settings, options, dependencies);
}
