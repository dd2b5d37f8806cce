/**
 * The skeleton every backend shares: check the key, plan the query, send one bounded HTTP call,
 * read the backend's result shape, compact the results. A backend kind supplies only its
 * {@link SearchProtocol} (how to ask, how to read the answer, how to explain an error status).
 */
import type { Dispatcher } from "undici";
import { compactSearchResults, type RawSearchResult } from "./compact-search-results.js";
import { planSearch, type SearchPlan } from "./plan-search.js";
import { requestSearchJson } from "./request-search-json.js";
import type {
  SearchBackend,
  SearchBackendKind,
  SearchFailure,
  SearchFailureReason,
  SearchOutcome,
  SearchQuery,
} from "./search-types.js";

/** One configured backend, resolved: money in micro-USD, key read from the environment. */
export interface SearchBackendSettings {
  id: string;
  /** Without a trailing slash; may carry a path prefix (`https://host/searxng`). */
  baseUrl: string;
  /** The environment variable the key comes from, named in messages (never the key itself). */
  apiKeyEnv?: string;
  apiKey?: string;
  timeoutMs: number;
  maxResponseBytes: number;
  pricePerCallMicroUsd: number;
  /** Ceiling for `SearchQuery.count`. */
  maxResultCount: number;
}

export interface SearchBackendDependencies {
  /** undici dispatcher (connection pools) the backend sends through. */
  dispatcher: Dispatcher;
  /** The clock used for relative dates ("2 days ago"). */
  now: () => Date;
}

export interface SearchHttpCall {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

export interface SearchProtocol<Options> {
  kind: SearchBackendKind;
  /** Shown in messages: "Brave Search answered HTTP 429 …". */
  label: string;
  /** Whether the backend needs a key even when the config names no variable for it. */
  requiresKey: boolean;
  buildCall(plan: SearchPlan, settings: SearchBackendSettings, options: Options): SearchHttpCall;
  /** The results of a 2xx answer, or null when the answer does not have the backend's shape. */
  readResults(json: unknown): RawSearchResult[] | null;
  /** Why the backend answered this status, in a few words (no secrets; bounded). */
  explainStatus(status: number, errorBody: unknown): string;
}

export function createSearchBackend<Options>(
  protocol: SearchProtocol<Options>,
  settings: SearchBackendSettings,
  options: Options,
  dependencies: SearchBackendDependencies,
): SearchBackend {
  // A backend that names a key variable needs it, even one (SearXNG) that can run without a key.
  const keyNeeded = protocol.requiresKey || settings.apiKeyEnv !== undefined;
  const configured = !keyNeeded || (settings.apiKey ?? "") !== "";

  async function search(query: SearchQuery, signal?: AbortSignal): Promise<SearchOutcome> {
    const started = performance.now();
    const fail = (reason: SearchFailureReason, message: string, status?: number): SearchFailure => ({
      ok: false,
      backend: settings.id,
      query: query.query,
      reason,
      message,
      ...(status === undefined ? {} : { status }),
      costMicroUsd: 0,
      durationMs: Math.round(performance.now() - started),
    });
    if (!configured) {
      return fail(
        "not_configured",
        `The ${protocol.label} backend "${settings.id}" has no API key: the environment variable ${settings.apiKeyEnv ?? "(none)"} is not set.`,
      );
    }
    const planned = planSearch(query, settings.maxResultCount);
    if (!planned.ok) return fail("invalid_input", planned.message);
    const { plan } = planned;
    const call = protocol.buildCall(plan, settings, options);
    const answer = await requestSearchJson(dependencies.dispatcher, {
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      signal,
      ...call,
    });
    if (!answer.ok) {
      if (answer.reason === "http_status" && answer.status !== undefined) {
        const why = protocol.explainStatus(answer.status, answer.errorBody);
        return fail(
          "http_status",
          `${protocol.label} answered HTTP ${answer.status}${why ? `: ${why}` : "."}`,
          answer.status,
        );
      }
      return fail(answer.reason, `${protocol.label}: ${answer.message}`);
    }
    const raw = protocol.readResults(answer.json);
    if (raw === null) {
      return fail("bad_response", `${protocol.label} answered JSON without its search result shape.`);
    }
    return {
      ok: true,
      backend: settings.id,
      query: plan.query,
      results: compactSearchResults(raw, plan, dependencies.now()),
      costMicroUsd: settings.pricePerCallMicroUsd,
      durationMs: Math.round(performance.now() - started),
    };
  }

  return {
    id: settings.id,
    kind: protocol.kind,
    configured,
    pricePerCallMicroUsd: settings.pricePerCallMicroUsd,
    search,
  };
}

/** The first string found at one of `paths` in an error body (`["detail", "error"]` → body.detail.error). */
export function pickErrorText(errorBody: unknown, paths: ReadonlyArray<readonly string[]>): string {
  for (const path of paths) {
    let value: unknown = errorBody;
    for (const key of path) {
      value =
        value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    }
    if (typeof value === "string" && value.trim() !== "") return truncateMessage(value.trim());
  }
  return "";
}

function truncateMessage(text: string): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > 200 ? `${oneLine.slice(0, 199)}…` : oneLine;
}

/** The `results` array of a JSON answer, or null when the answer has none (SearXNG's and Tavily's shape). */
export function readResultArray(json: unknown): unknown[] | null {
  if (json === null || typeof json !== "object") return null;
  const { results } = json as { results?: unknown };
  return Array.isArray(results) ? results : null;
}

/** `base` + `path`, keeping a path prefix of the base (`https://h/searx` + `/search`). */
export function joinUrl(base: string, path: string): URL {
  return new URL(`${base.replace(/\/+$/, "")}${path}`);
}

/** Appends ` site:<host>` when exactly one host is allowed and the query stays within `maxChars`. */
export function addSiteOperator(query: string, allowedDomains: readonly string[], maxChars: number): string {
  if (allowedDomains.length !== 1) return query;
  const host = allowedDomains[0].split("/")[0];
  const withSite = `${query} site:${host}`;
  return withSite.length <= maxChars ? withSite : query;
}

/** True when the domain filters can only be applied to the results (so the backend should over-fetch). */
export function needsResultFiltering(plan: SearchPlan): boolean {
  return (
    plan.blockedDomains.length > 0 ||
    plan.allowedDomains.length > 1 ||
    plan.allowedDomains.some((domain) => domain.includes("/"))
  );
}
