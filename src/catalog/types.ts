/** The model catalog and its providers as the gateway runs them (camelCase, validated, money as integers). */
import type { ModelPrices } from "../metering/prices.js";
import type { DEMO_PROVIDER_KIND, MODEL_FEATURES, PROVIDER_KINDS } from "./provider-kinds.js";

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
