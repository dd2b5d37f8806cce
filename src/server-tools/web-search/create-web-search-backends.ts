/**
 * The parsed `server_tools.web_search` config → ready backends, keys read from the environment
 * object passed in (never from `process.env` behind the caller's back). A backend whose key
 * variable is unset is still created, answers `not_configured`, and is listed in
 * `missingConfiguration` so the gateway can say so at start and in the error of a request that
 * activates web_search.
 */
import { Agent, type Dispatcher } from "undici";
import type {
  SearchBackendConfigFile,
  WebSearchConfigFile,
} from "../../config/server-tools/web-search-config.js";
import { tryParseUsdToMicroUsd } from "../../metering/money.js";
import { createBraveBackend } from "./brave-backend.js";
import type { SearchBackendDependencies, SearchBackendSettings } from "./create-search-backend.js";
import type { SearchBackend } from "./search-types.js";
import { createSearxngBackend } from "./searxng-backend.js";
import { createTavilyBackend } from "./tavily-backend.js";

export interface WebSearchBackends {
  /** Every configured backend by id, in file order. */
  readonly backends: ReadonlyMap<string, SearchBackend>;
  /** `default_backend`, else the first one. */
  readonly defaultBackend: SearchBackend;
  readonly maxResultCount: number;
  readonly maxResultTextChars: number;
  /** One line per backend that cannot search: `brave: environment variable BRAVE_API_KEY is not set`. */
  readonly missingConfiguration: readonly string[];
  /** The backend with this id, or the default when `id` is undefined; undefined for an unknown id. */
  select(id?: string): SearchBackend | undefined;
  /** Closes the connection pools this object created (not a dispatcher passed in). */
  close(): Promise<void>;
}

export interface CreateWebSearchBackendsOptions {
  /** Connection pools to send through; default: a new undici Agent owned by the result. */
  dispatcher?: Dispatcher;
  /** Clock for relative result dates; default `() => new Date()`. */
  now?: () => Date;
}

export function createWebSearchBackends(
  config: WebSearchConfigFile,
  env: Readonly<Record<string, string | undefined>>,
  options: CreateWebSearchBackendsOptions = {},
): WebSearchBackends {
  const ownedAgent =
    options.dispatcher === undefined ? new Agent({ keepAliveTimeout: 30_000, connections: 32 }) : undefined;
  const dependencies: SearchBackendDependencies = {
    dispatcher: options.dispatcher ?? (ownedAgent as Dispatcher),
    now: options.now ?? (() => new Date()),
  };
  const backends = new Map<string, SearchBackend>();
  const missingConfiguration: string[] = [];
  for (const entry of config.backends) {
    const settings = resolveSettings(entry, env, config.max_result_count);
    const backend = createBackend(entry, settings, dependencies);
    if (!backend.configured) {
      missingConfiguration.push(`${entry.id}: environment variable ${entry.api_key_env} is not set`);
    }
    backends.set(entry.id, backend);
  }
  const defaultBackend = backends.get(config.default_backend ?? config.backends[0].id)!;
  return {
    backends,
    defaultBackend,
    maxResultCount: config.max_result_count,
    maxResultTextChars: config.max_result_text_chars,
    missingConfiguration,
    select: (id) => (id === undefined ? defaultBackend : backends.get(id)),
    close: async () => {
      await ownedAgent?.close();
    },
  };
}

function resolveSettings(
  entry: SearchBackendConfigFile,
  env: Readonly<Record<string, string | undefined>>,
  maxResultCount: number,
): SearchBackendSettings {
  const price = tryParseUsdToMicroUsd(entry.price_per_call_usd);
  // The schema refused every price this could not convert.
  if (!price.ok) throw new Error(`${entry.id}: price_per_call_usd: ${price.reason}`);
  return {
    id: entry.id,
    baseUrl: entry.base_url.replace(/\/+$/, ""),
    apiKeyEnv: entry.api_key_env,
    apiKey: entry.api_key_env === undefined ? undefined : env[entry.api_key_env] || undefined,
    timeoutMs: entry.timeout_ms,
    maxResponseBytes: entry.max_response_bytes,
    pricePerCallMicroUsd: price.microUsd,
    maxResultCount,
  };
}

function createBackend(
  entry: SearchBackendConfigFile,
  settings: SearchBackendSettings,
  dependencies: SearchBackendDependencies,
): SearchBackend {
  switch (entry.kind) {
    case "searxng":
      return createSearxngBackend(
        settings,
        {
          authHeader: entry.auth_header,
          categories: entry.categories,
          language: entry.language,
          safesearch: entry.safesearch,
        },
        dependencies,
      );
    case "brave":
      return createBraveBackend(settings, { safesearch: entry.safesearch }, dependencies);
    case "tavily":
      return createTavilyBackend(settings, { searchDepth: entry.search_depth }, dependencies);
  }
}
