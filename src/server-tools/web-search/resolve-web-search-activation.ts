/**
 * A request's web_search activation parameters (in the wire form the client sent them, see the
 * ingress decoders) → the options every search of that request uses, and the merge of those with
 * the model's own arguments into one {@link SearchQuery}.
 *
 * Accepted parameters, whichever format carried them:
 * - `search_context_size`: `low` | `medium` | `high` (OpenAI);
 * - `user_location`: `{type: "approximate", approximate: {city, region, country, timezone}}` (Chat
 *   Completions) or the same fields flat (Responses, Messages);
 * - `filters.allowed_domains` / `filters.blocked_domains` (Responses), `allowed_domains`,
 *   `blocked_domains` (Messages), `excluded_domains` (OpenRouter);
 * - `max_results` (OpenRouter): the result count when the model names none.
 * Any other key is returned in `ignored`, for the caller to reject or pass over as it decides.
 */
import { resolveTimeZone } from "../../config/server-tools/time-zones.js";
import { isUrlUnderDomain } from "./domain-filter.js";
import type { SearchContextSize, SearchQuery, SearchUserLocation } from "./search-types.js";
import { readDomainList, type WebSearchToolInput } from "./web-search-tool-definition.js";

export interface WebSearchActivationOptions {
  contextSize?: SearchContextSize;
  userLocation?: SearchUserLocation;
  allowedDomains?: string[];
  blockedDomains?: string[];
  count?: number;
}

export type ResolveWebSearchActivationResult =
  | { ok: true; options: WebSearchActivationOptions; ignored: string[] }
  /** `param` is relative to the parameters object (`user_location.country`); `message` names the rule. */
  | { ok: false; param: string; message: string };

const KNOWN_KEYS = new Set([
  "search_context_size",
  "user_location",
  "filters",
  "allowed_domains",
  "blocked_domains",
  "excluded_domains",
  "max_results",
]);
const CONTEXT_SIZES = new Set(["low", "medium", "high"]);
const LOCATION_FIELDS = ["city", "region", "country", "timezone"] as const;
const MAX_LOCATION_TEXT_CHARS = 100;

type Failure = Extract<ResolveWebSearchActivationResult, { ok: false }>;

export function resolveWebSearchActivation(
  parameters: Readonly<Record<string, unknown>> | undefined,
  maxResultCount: number,
): ResolveWebSearchActivationResult {
  const options: WebSearchActivationOptions = {};
  const ignored: string[] = [];
  const params = parameters ?? {};
  for (const key of Object.keys(params)) if (!KNOWN_KEYS.has(key)) ignored.push(key);

  const size = params.search_context_size;
  if (size !== undefined && size !== null) {
    if (typeof size !== "string" || !CONTEXT_SIZES.has(size)) {
      return fail("search_context_size", "must be one of low, medium, high");
    }
    options.contextSize = size as SearchContextSize;
  }

  const location = readUserLocation(params.user_location);
  if (location !== undefined && "param" in location) return location;
  if (location !== undefined) options.userLocation = location;

  const filters = params.filters;
  if (filters !== undefined && filters !== null && (typeof filters !== "object" || Array.isArray(filters))) {
    return fail("filters", "must be an object with allowed_domains and/or blocked_domains");
  }
  const filterObject = (filters ?? {}) as Record<string, unknown>;
  const allowed: string[] = [];
  const blocked: string[] = [];
  for (const [param, value, target] of [
    ["filters.allowed_domains", filterObject.allowed_domains, allowed],
    ["filters.blocked_domains", filterObject.blocked_domains, blocked],
    ["allowed_domains", params.allowed_domains, allowed],
    ["blocked_domains", params.blocked_domains, blocked],
    ["excluded_domains", params.excluded_domains, blocked],
  ] as const) {
    const domains = readDomainList(value);
    if (typeof domains === "string") return fail(param, domains.replace(/\.$/, ""));
    for (const domain of domains) if (!target.includes(domain)) target.push(domain);
  }
  if (allowed.length > 0) options.allowedDomains = allowed;
  if (blocked.length > 0) options.blockedDomains = blocked;

  const maxResults = params.max_results;
  if (maxResults !== undefined && maxResults !== null) {
    if (typeof maxResults !== "number" || !Number.isInteger(maxResults) || maxResults < 1) {
      return fail("max_results", "must be a positive integer");
    }
    if (maxResults > maxResultCount) {
      return fail("max_results", `must be at most ${maxResultCount} on this gateway`);
    }
    options.count = maxResults;
  }
  return { ok: true, options, ignored };
}

function readUserLocation(value: unknown): SearchUserLocation | Failure | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    return fail("user_location", 'must be an object such as {"type": "approximate", "country": "FR"}');
  }
  const outer = value as Record<string, unknown>;
  if (outer.type !== undefined && outer.type !== null && outer.type !== "approximate") {
    return fail("user_location.type", 'must be "approximate"');
  }
  // Chat Completions nests the fields under `approximate`; Responses and Messages put them flat.
  const nested = outer.approximate !== undefined && outer.approximate !== null;
  if (nested && (typeof outer.approximate !== "object" || Array.isArray(outer.approximate))) {
    return fail("user_location.approximate", "must be an object");
  }
  const fields = (nested ? outer.approximate : outer) as Record<string, unknown>;
  const prefix = nested ? "user_location.approximate" : "user_location";
  const location: SearchUserLocation = {};
  for (const field of LOCATION_FIELDS) {
    const raw = fields[field];
    if (raw === undefined || raw === null || raw === "") continue;
    const param = `${prefix}.${field}`;
    if (typeof raw !== "string" || raw.trim().length > MAX_LOCATION_TEXT_CHARS) {
      return fail(param, `must be a string of at most ${MAX_LOCATION_TEXT_CHARS} characters`);
    }
    const text = raw.trim();
    if (field === "country") {
      if (!/^[A-Za-z]{2}$/.test(text)) return fail(param, 'must be an ISO 3166-1 alpha-2 code such as "FR"');
      location.country = text.toUpperCase();
    } else if (field === "timezone") {
      const zone = resolveTimeZone(text);
      if (zone === null) return fail(param, 'must be an IANA time zone such as "Europe/Paris"');
      location.timezone = zone;
    } else {
      location[field] = text;
    }
  }
  return Object.keys(location).length > 0 ? location : undefined;
}

/**
 * One search: the model's arguments within the request's options. The model may narrow the
 * caller's allowed domains but never widen them (its domains outside the caller's list are dropped,
 * and if none remain the caller's list applies); blocked domains add up.
 */
export function buildSearchQuery(
  options: WebSearchActivationOptions,
  input: WebSearchToolInput,
): SearchQuery {
  const query: SearchQuery = { query: input.query };
  const count = input.count ?? options.count;
  if (count !== undefined) query.count = count;
  if (options.contextSize !== undefined) query.contextSize = options.contextSize;
  if (options.userLocation !== undefined) query.userLocation = options.userLocation;
  const allowed = narrowAllowedDomains(options.allowedDomains ?? [], input.allowedDomains ?? []);
  if (allowed.length > 0) query.allowedDomains = allowed;
  const blocked = [...new Set([...(options.blockedDomains ?? []), ...(input.blockedDomains ?? [])])];
  if (blocked.length > 0) query.blockedDomains = blocked;
  return query;
}

function narrowAllowedDomains(
  callerDomains: readonly string[],
  modelDomains: readonly string[],
): readonly string[] {
  if (callerDomains.length === 0) return modelDomains;
  if (modelDomains.length === 0) return callerDomains;
  const inside = modelDomains.filter((domain) =>
    callerDomains.some((allowed) => isUrlUnderDomain(new URL(`http://${domain}`), allowed)),
  );
  return inside.length > 0 ? inside : callerDomains;
}

function fail(param: string, message: string): Failure {
  return { ok: false, param, message };
}
