/**
 * The one interface every web-search backend implements, and the values that cross it. A backend
 * never throws: every problem (missing key, deadline, HTTP status, unreadable body, caller abort)
 * is a {@link SearchFailure}, so the tool loop can hand the model a result that says so and carry
 * on with the answer.
 */

export type SearchContextSize = "low" | "medium" | "high";

/** Approximate location of the user, as the OpenAI and Anthropic tools carry it. */
export interface SearchUserLocation {
  /** ISO 3166-1 alpha-2, upper case (`FR`). */
  country?: string;
  city?: string;
  /** Free text (`Île-de-France`, `California`) or a subdivision code (`CA`). */
  region?: string;
  /** IANA time zone (`Europe/Paris`). */
  timezone?: string;
}

/** One search as the gateway asks it; each backend maps what it can and filters the rest afterwards. */
export interface SearchQuery {
  query: string;
  /** Results wanted (1 … the configured maximum); default from `contextSize`. */
  count?: number;
  /** How much text the model gets: result count default and snippet length. Default `medium`. */
  contextSize?: SearchContextSize;
  userLocation?: SearchUserLocation;
  /** Normalised domains (`example.com`, `docs.example.com/guide`); subdomains match. */
  allowedDomains?: readonly string[];
  blockedDomains?: readonly string[];
}

/** One result, compact and safe to show: plain text, an absolute http(s) URL, a normalised date. */
export interface SearchResult {
  /** Never empty: the URL's host when the backend gave no title. */
  title: string;
  url: string;
  /** Plain text (markup and entities removed), cut to the context size's snippet length. */
  snippet: string;
  /** ISO 8601: `YYYY-MM-DD` when only the day is known, else `YYYY-MM-DDTHH:MM:SSZ` (UTC); null if unknown. */
  date: string | null;
  /**
   * How old the page is, as free text for Anthropic's `web_search_result.page_age`: the backend's
   * own wording when it has one (`2 days ago`), else `date`; null if unknown.
   */
  pageAge: string | null;
}

export type SearchFailureReason =
  /** The backend's API key variable is unset (or the backend id is unknown). */
  | "not_configured"
  /** The query cannot be sent (empty, too long); nothing was sent. */
  | "invalid_input"
  /** The call's deadline passed (connect, headers or body). */
  | "timeout"
  /** Connection refused or reset, DNS failure, TLS failure. */
  | "network"
  /** A non-2xx answer (3xx included: redirects are not followed). */
  | "http_status"
  /** A 2xx answer that is not the backend's JSON shape, or larger than the byte cap. */
  | "bad_response"
  /** The caller's signal aborted the call (the request went away). */
  | "aborted";

export interface SearchSuccess {
  ok: true;
  backend: string;
  /** The query as sent (after trimming), for events and renderings. */
  query: string;
  results: SearchResult[];
  /** The configured price of one call, in micro-USD. */
  costMicroUsd: number;
  durationMs: number;
}

export interface SearchFailure {
  ok: false;
  backend: string;
  query: string;
  reason: SearchFailureReason;
  /** One sentence for logs, events and the model's tool result; never contains a secret. */
  message: string;
  /** The HTTP status when `reason` is `http_status`. */
  status?: number;
  /** A failed call costs nothing. */
  costMicroUsd: 0;
  durationMs: number;
}

export type SearchOutcome = SearchSuccess | SearchFailure;

export type SearchBackendKind = "searxng" | "brave" | "tavily";

export interface SearchBackend {
  /** The configured id (`brave`, `my-searxng`). */
  readonly id: string;
  readonly kind: SearchBackendKind;
  /** False when a required API key variable is unset; `search` then answers `not_configured`. */
  readonly configured: boolean;
  /** Price of one successful call, in micro-USD. */
  readonly pricePerCallMicroUsd: number;
  /** Resolves with an outcome; never rejects. */
  search(query: SearchQuery, signal?: AbortSignal): Promise<SearchOutcome>;
}
