/**
 * A catalog entry's `pricing` (USD per 1M tokens, as written) → the integer prices metering bills
 * with, and the figures the public catalog shows. A price left out falls back to the prompt price
 * (`cached_prompt`, `cache_write`) or to `cache_write` (the extended-retention writes); a tier must
 * repeat every class the base prices give, so no tier silently bills a class at a fallback. A
 * scheduled change is a whole price set of its own (its tiers included), in force from its date.
 */

import type { CatalogPricing, CatalogTokenPricing } from "../catalog/types.js";
import {
  convertUsdPerMillionToPicoPerToken,
  type ModelPrices,
  type TokenPrices,
} from "../metering/prices.js";
import { ConfigError } from "./config-error.js";
import type { ModelConfigFile } from "./config-schema.js";

type PricingFile = ModelConfigFile["pricing"];
type TokenPricingFile = Omit<PricingFile, "tiers" | "checked_on" | "scheduled">;
/** Prices with their tiers: the base pricing, or one scheduled change. */
type PriceSetFile = TokenPricingFile & { tiers: PricingFile["tiers"] };

const OPTIONAL_CLASSES = ["cached_prompt", "cache_write", "cache_write_1h", "cache_write_12h"] as const;

export function resolveModelPrices(model: ModelConfigFile, where: string): ModelPrices {
  const { pricing } = model;
  const base = resolvePriceSet(pricing, model.context_length, where);
  const scheduled = pricing.scheduled.map((change, index) => {
    const changeWhere = `${where}.scheduled[${index}]`;
    const previous = pricing.scheduled[index - 1];
    if (previous !== undefined && change.from <= previous.from) {
      throw new ConfigError(
        `${changeWhere}.from: changes go in ascending order (${change.from} follows ${previous.from})`,
      );
    }
    return {
      fromMs: Date.parse(`${change.from}T00:00:00Z`),
      prices: resolvePriceSet(change, model.context_length, changeWhere),
    };
  });
  return scheduled.length === 0 ? base : Object.assign(base, { scheduled });
}

function resolvePriceSet(pricing: PriceSetFile, contextLength: number, where: string): ModelPrices {
  if (pricing.cache_write_1h !== undefined && pricing.cache_write_12h !== undefined) {
    throw new ConfigError(
      `${where}.cache_write_12h: a model has one extended cache retention (cache_write_1h for Anthropic, cache_write_12h for OpenAI), not both`,
    );
  }
  const base = resolveTokenPrices(pricing, where);
  const tiers = pricing.tiers.map((tier, index) => {
    const tierWhere = `${where}.tiers[${index}]`;
    const previous = pricing.tiers[index - 1];
    if (previous !== undefined && tier.above_prompt_tokens <= previous.above_prompt_tokens) {
      throw new ConfigError(
        `${tierWhere}.above_prompt_tokens: tiers go in ascending order (${tier.above_prompt_tokens} follows ${previous.above_prompt_tokens})`,
      );
    }
    if (tier.above_prompt_tokens >= contextLength) {
      throw new ConfigError(
        `${tierWhere}.above_prompt_tokens: ${tier.above_prompt_tokens} is not below context_length ${contextLength}, so no prompt reaches it`,
      );
    }
    for (const field of OPTIONAL_CLASSES) {
      if (pricing[field] !== undefined && tier[field] === undefined) {
        throw new ConfigError(`${tierWhere}.${field}: required, since the base pricing gives ${field}`);
      }
      if (pricing[field] === undefined && tier[field] !== undefined) {
        throw new ConfigError(`${tierWhere}.${field}: the base pricing gives no ${field}; give it there too`);
      }
    }
    return { abovePromptTokens: tier.above_prompt_tokens, prices: resolveTokenPrices(tier, tierWhere) };
  });
  return tiers.length === 0 ? base : Object.assign(base, { tiers });
}

/** The prices as written, for `GET /api/v1/models` (numbers, USD per 1M tokens). */
export function resolvePricingForCatalog(pricing: PricingFile): CatalogPricing {
  const catalog: CatalogPricing = {
    prompt: Number(pricing.prompt),
    completion: Number(pricing.completion),
    tiers: renderTiers(pricing.tiers),
  };
  const classes = toCatalogTokenPricing(pricing);
  catalog.cachedPrompt = classes.cachedPrompt;
  catalog.cacheWrite = classes.cacheWrite;
  catalog.cacheWrite1h = classes.cacheWrite1h;
  catalog.cacheWrite12h = classes.cacheWrite12h;
  if (pricing.checked_on !== undefined) catalog.checkedOn = pricing.checked_on;
  if (pricing.scheduled.length > 0) {
    catalog.scheduled = pricing.scheduled.map((change) => {
      const rendered = { from: change.from, tiers: renderTiers(change.tiers) };
      return Object.assign(rendered, toCatalogTokenPricing(change));
    });
  }
  return catalog;
}

function renderTiers(tiers: PricingFile["tiers"]): NonNullable<CatalogPricing["tiers"]> {
  return tiers.map((tier) => ({
    abovePromptTokens: tier.above_prompt_tokens,
    pricing: toCatalogTokenPricing(tier),
  }));
}

function toCatalogTokenPricing(pricing: TokenPricingFile): CatalogTokenPricing {
  const number = (value: number | string | undefined) => (value === undefined ? undefined : Number(value));
  return {
    prompt: Number(pricing.prompt),
    completion: Number(pricing.completion),
    cachedPrompt: number(pricing.cached_prompt),
    cacheWrite: number(pricing.cache_write),
    cacheWrite1h: number(pricing.cache_write_1h),
    cacheWrite12h: number(pricing.cache_write_12h),
  };
}

function resolveTokenPrices(pricing: TokenPricingFile, where: string): TokenPrices {
  const price = (value: number | string | undefined, field: string, fallback: bigint): bigint => {
    if (value === undefined) return fallback;
    try {
      return convertUsdPerMillionToPicoPerToken(value);
    } catch (error) {
      throw new ConfigError(`${where}.${field}: ${(error as Error).message}`);
    }
  };
  const prompt = price(pricing.prompt, "prompt", 0n);
  const cacheWrite = price(pricing.cache_write, "cache_write", prompt);
  // One extended retention per provider: Anthropic's 1-hour TTL or OpenAI's 12-hour retention.
  const extended = pricing.cache_write_1h ?? pricing.cache_write_12h;
  return {
    promptPicoUsd: prompt,
    completionPicoUsd: price(pricing.completion, "completion", 0n),
    cachedPromptPicoUsd: price(pricing.cached_prompt, "cached_prompt", prompt),
    cacheWritePicoUsd: cacheWrite,
    cacheWrite1hPicoUsd: price(
      extended,
      pricing.cache_write_1h === undefined ? "cache_write_12h" : "cache_write_1h",
      cacheWrite,
    ),
  };
}
