/**
 * Turns a {@link SearchQuery} into the concrete plan every backend works from: the trimmed query,
 * how many results to keep, how long a snippet may be, and the domain filters to apply afterwards.
 * One place for the context-size table and the query limits, so all backends answer alike.
 */
import type { SearchContextSize, SearchQuery, SearchUserLocation } from "./search-types.js";

/** Results kept and snippet length per `search_context_size`. */
export const CONTEXT_SIZE_LIMITS: Record<SearchContextSize, { defaultCount: number; snippetChars: number }> =
  {
    low: { defaultCount: 3, snippetChars: 240 },
    medium: { defaultCount: 5, snippetChars: 480 },
    high: { defaultCount: 8, snippetChars: 1000 },
  };

/** The largest count any backend returns in one call (Brave `count` and Tavily `max_results` stop at 20). */
export const MAX_RESULT_COUNT = 20;
/** Brave and Tavily refuse longer queries; the gateway holds every backend to the strictest limit. */
export const MAX_QUERY_CHARS = 400;
export const MAX_QUERY_WORDS = 50;

export interface SearchPlan {
  query: string;
  count: number;
  contextSize: SearchContextSize;
  snippetChars: number;
  userLocation: SearchUserLocation | undefined;
  allowedDomains: readonly string[];
  blockedDomains: readonly string[];
}

export type PlanSearchResult = { ok: true; plan: SearchPlan } | { ok: false; message: string };

export function planSearch(query: SearchQuery, maxCount: number): PlanSearchResult {
  const text = query.query.trim().replace(/\s+/g, " ");
  if (text === "") return { ok: false, message: "The search query is empty." };
  if (text.length > MAX_QUERY_CHARS) {
    return { ok: false, message: `The search query is longer than ${MAX_QUERY_CHARS} characters.` };
  }
  if (text.split(" ").length > MAX_QUERY_WORDS) {
    return { ok: false, message: `The search query has more than ${MAX_QUERY_WORDS} words.` };
  }
  const contextSize = query.contextSize ?? "medium";
  const limits = CONTEXT_SIZE_LIMITS[contextSize];
  const ceiling = Math.max(1, Math.min(maxCount, MAX_RESULT_COUNT));
  const wanted = query.count ?? limits.defaultCount;
  const count = Math.max(1, Math.min(Math.trunc(wanted), ceiling));
  return {
    ok: true,
    plan: {
      query: text,
      count,
      contextSize,
      snippetChars: limits.snippetChars,
      userLocation: query.userLocation,
      allowedDomains: query.allowedDomains ?? [],
      blockedDomains: query.blockedDomains ?? [],
    },
  };
}
