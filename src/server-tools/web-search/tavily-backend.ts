/**
 * Tavily: `POST <base_url>/search` with `Authorization: Bearer <key>` and a JSON body. Tavily
 * filters domains itself (`include_domains`, `exclude_domains`) and boosts one country, named in
 * lower-case English (`united states`); city, region and time zone have no Tavily parameter.
 * `search_depth` comes from the config (`advanced` costs Tavily two credits, so price it so);
 * with `advanced`, the context size sets `chunks_per_source` (1, 2, 3).
 */
import type { RawSearchResult } from "./compact-search-results.js";
import {
  createSearchBackend,
  joinUrl,
  pickErrorText,
  readResultArray,
  type SearchBackendDependencies,
  type SearchBackendSettings,
  type SearchProtocol,
} from "./create-search-backend.js";
import type { SearchBackend, SearchContextSize } from "./search-types.js";

export interface TavilyOptions {
  searchDepth: "basic" | "advanced";
}

const CHUNKS_PER_SOURCE: Record<SearchContextSize, number> = { low: 1, medium: 2, high: 3 };

/** Where Tavily's spelling differs from the English region name (after `&` → `and`). */
const TAVILY_COUNTRY_NAMES: Record<string, string> = {
  CZ: "czech republic",
  TR: "turkey",
  HK: "hong kong",
  MM: "myanmar",
  PS: "palestine",
};

let regionNames: Intl.DisplayNames | undefined;

/** Tavily's name for an ISO 3166-1 alpha-2 code, or undefined when there is no plain English one. */
export function getTavilyCountryName(code: string): string | undefined {
  const override = TAVILY_COUNTRY_NAMES[code];
  if (override !== undefined) return override;
  regionNames ??= new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
  let name: string | undefined;
  try {
    name = regionNames.of(code);
  } catch {
    return undefined;
  }
  const plain = name?.toLowerCase().replace(/ & /g, " and ");
  return plain !== undefined && /^[a-z][a-z -]*$/.test(plain) ? plain : undefined;
}

const tavilyProtocol: SearchProtocol<TavilyOptions> = {
  kind: "tavily",
  label: "Tavily",
  requiresKey: true,
  buildCall(plan, settings, options) {
    const body: Record<string, unknown> = {
      query: plan.query,
      max_results: plan.count,
      search_depth: options.searchDepth,
      topic: "general",
      include_answer: false,
      include_raw_content: false,
      include_images: false,
    };
    if (options.searchDepth === "advanced") body.chunks_per_source = CHUNKS_PER_SOURCE[plan.contextSize];
    if (plan.allowedDomains.length > 0) body.include_domains = plan.allowedDomains;
    if (plan.blockedDomains.length > 0) body.exclude_domains = plan.blockedDomains;
    const country = plan.userLocation?.country;
    const countryName = country === undefined ? undefined : getTavilyCountryName(country);
    if (countryName !== undefined) body.country = countryName;
    return {
      url: joinUrl(settings.baseUrl, "/search"),
      method: "POST",
      headers: {
        accept: "application/json",
        "content-type": "application/json",
        authorization: `Bearer ${settings.apiKey ?? ""}`,
      },
      body: JSON.stringify(body),
    };
  },
  readResults(json) {
    return (
      readResultArray(json)?.map((item): RawSearchResult => {
        const result = (item ?? {}) as Record<string, unknown>;
        return {
          title: result.title,
          url: result.url,
          snippets: [result.content],
          date: result.published_date,
        };
      }) ?? null
    );
  },
  explainStatus(status, errorBody) {
    const detail = pickErrorText(errorBody, [["detail", "error"], ["detail"], ["error"]]);
    if (status === 401) return `the API key was refused${detail ? ` (${detail})` : "."}`;
    if (status === 429) return `rate limit reached${detail ? ` (${detail})` : "."}`;
    if (status === 432 || status === 433)
      return `the plan's usage limit is reached${detail ? ` (${detail})` : "."}`;
    return detail;
  },
};

export function createTavilyBackend(
  settings: SearchBackendSettings,
  options: TavilyOptions,
  dependencies: SearchBackendDependencies,
): SearchBackend {
  return createSearchBackend(tavilyProtocol, settings, options, dependencies);
}
