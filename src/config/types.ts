/** Runtime (camelCase, validated, money-as-integers) view of the config. */
import type { ModelPrices } from "../metering/prices.js";
import type { DatetimeConfigFile } from "../server-tools/datetime/datetime-config.js";
import type { ImageToolConfigFile } from "../server-tools/image/image-config.js";
import type { PdfToolConfigFile } from "../server-tools/pdf/pdf-config.js";
import type { WebFetchConfigFile } from "../server-tools/web-fetch/web-fetch-config.js";
import type { WebSearchConfigFile } from "../server-tools/web-search/web-search-config.js";
import type { DEMO_PROVIDER_KIND, MODEL_FEATURES, PROVIDER_KINDS } from "./config-schema.js";

/** The kinds that call an upstream's API. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
/** What a provider of the config file may be: an upstream kind, or the local demo. */
export type ConfiguredProviderKind = ProviderKind | typeof DEMO_PROVIDER_KIND;
export type ModelFeature = (typeof MODEL_FEATURES)[number];

export interface ProviderTimeouts {
  /** TCP and TLS. */
  connectMs: number;
  /** Request sent → response head, for a streamed call while another route waits to be tried. */
  firstByteMs: number;
  /**
   * Request sent → response head otherwise: a non-streamed call (the upstream sends its head with
   * the whole answer) and a call with no route left to fail over to.
   */
  responseMs: number;
  /** Between two chunks of a body. */
  idleMs: number;
}

export interface ProviderConfig {
  id: string;
  kind: ConfiguredProviderKind;
  /** Base URL without trailing slash, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKeyEnv?: string;
  /** Resolved from `apiKeyEnv` at start; undefined when the variable is unset. */
  apiKey?: string;
  timeouts: ProviderTimeouts;
  headers: Record<string, string>;
  quirks: ProviderQuirks;
}

export interface ProviderQuirks {
  /** Top-level request fields never sent to this host. */
  excludedParams: string[];
  /** `alphanumeric-9`: tool-call ids rewritten to 9 [a-zA-Z0-9] characters (Mistral), consistently. */
  toolCallIdFormat: "any" | "alphanumeric-9";
  maxTokensField: "max_completion_tokens" | "max_tokens";
}

export interface ModelRoute {
  provider: ProviderConfig;
  upstreamModel: string;
}

/** One set of prices as written in the catalog file, USD per 1M tokens. */
export interface CatalogTokenPricing {
  prompt: number;
  completion: number;
  cachedPrompt?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  cacheWrite12h?: number;
}

/** A model's prices as written in the catalog file: the base prices, its tiers, when checked. */
export interface CatalogPricing extends CatalogTokenPricing {
  tiers?: Array<{ abovePromptTokens: number; pricing: CatalogTokenPricing }>;
  /** Announced changes: from 00:00 UTC of `from` on, these prices and tiers replace the ones above. */
  scheduled?: Array<
    CatalogTokenPricing & {
      from: string;
      tiers: Array<{ abovePromptTokens: number; pricing: CatalogTokenPricing }>;
    }
  >;
  checkedOn?: string;
}

export interface CatalogModel {
  slug: string;
  name: string;
  /**
   * The names besides the slug that resolve to this model, as configured: its own `aliases`, then
   * the names of the operator's `aliases` map that stand for it (docs/configuration.md, "Model names").
   */
  aliases: string[];
  /** The family an operator's name may stand for (its newest member by release date). */
  family?: string;
  provider: { slug: string; name: string; brandColor?: string };
  description: string;
  releaseDate: string;
  contextLength: number;
  maxOutputTokens: number;
  /** Prices as written in the file (USD per 1M tokens), for the public catalog. */
  pricingUsdPerMillion: CatalogPricing;
  prices: ModelPrices;
  features: ModelFeature[];
  datacenterLocations: string[];
  huggingFaceId?: string;
  benchmarks: Array<{
    label: string;
    score: number;
    unit: string;
    mode?: string;
    sourceUrl: string;
    tier: "primary" | "extra";
  }>;
  weeklyTokenVolume?: number;
  /** The server tools the model's provider runs itself, with the price of one call. */
  nativeServerTools?: Partial<Record<"web_search" | "web_fetch", { pricePerCallMicroUsd: number }>>;
  routes: ModelRoute[];
}

/**
 * The names a request may use, each mapped once at load: slugs, aliases, `<creator>/<alias>`,
 * the operator's names, and a slug's model part where only one model has it. A model part that
 * several slugs share is kept apart, for the error that lists them.
 */
export interface ModelNames {
  byName: ReadonlyMap<string, CatalogModel>;
  ambiguous: ReadonlyMap<string, readonly CatalogModel[]>;
}

export interface GatewayConfig {
  providers: ProviderConfig[];
  models: CatalogModel[];
  modelsBySlug: Map<string, CatalogModel>;
  /** Every name a request may use for a model, built once at load (build-model-names.ts). */
  modelNames: ModelNames;
  maxBodyBytes: number;
  /** Caps on one request's messages, content blocks (all messages together) and tools. */
  requestShape: { maxMessages: number; maxContentParts: number; maxTools: number };
  /** Requests per minute of keys without their own value; null: unlimited. */
  defaultRequestsPerMinute: number | null;
  /** Lifetime of a spend reservation that is no longer refreshed (its instance is gone). */
  reservationTtlMs: number;
  /** After Redis lost its memory: no admission against a limit for this long (`limits.limit_store_recovery_seconds`). */
  limitStoreRecoveryMs: number;
  /** An instance silent in Redis this long has died (`limits.instance_lease_seconds`). */
  instanceLeaseMs: number;
  /** The longest one generation may run (`limits.max_request_seconds`). */
  maxRequestMs: number;
  /** How long a streaming client may take no bytes before it is dropped. */
  clientReadTimeoutMs: number;
  /** How long a Responses WebSocket may sit with no turn and no message before it is closed. */
  webSocketIdleTimeoutMs: number;
  defaultWorkspaceCreditsMicroUsd: number;
  /** Failover, retries and circuit breaking across routes (`routing.*`). */
  routing: {
    retries: number;
    retryBaseDelayMs: number;
    maxRetryAfterMs: number;
    failoverDeadlineMs: number;
    breakerFailures: number;
    breakerCooldownMs: number;
    /** Same prompt-cache key or prefix → same route (engine/prompt-cache-affinity.ts). */
    promptCacheAffinity: boolean;
  };
  /** The exact response cache (`response_cache.*`, docs/response-cache.md). */
  responseCache: {
    maxEntryBytes: number;
    memoryBytes: number;
    maxTtlSeconds: number;
  };
  /**
   * `meta.image_generation_configured`: the `image` tool is configured and at least one of its
   * providers can be called (its key variable is set, or it needs none).
   */
  imageGenerationConfigured: boolean;
  /**
   * The server tools (`server_tools`): the loop's round cap and each tool's section as the file has
   * it (server-tools/ builds the tools from them). Absent in configs built in code: no server tool.
   */
  serverTools?: {
    maxRounds: number;
    /** The most calls of one tool a provider running it itself may make per upstream round. */
    maxNativeCallsPerRound: number;
    webSearch?: WebSearchConfigFile;
    webFetch: WebFetchConfigFile;
    datetime: DatetimeConfigFile;
    /** Absent in configs built in code: the defaults. */
    pdf?: PdfToolConfigFile;
    /** Absent: the `image` tool is not configured. */
    image?: ImageToolConfigFile;
  };
  /** Origins whose browsers may call the public API: `["*"]` (any), a list, or none (CORS off). */
  cors: { allowedOrigins: readonly string[] };
  /** `GET /metrics`: served at all, and only to callers with the internal token. */
  metrics: { enabled: boolean; requireInternalToken: boolean };
}
