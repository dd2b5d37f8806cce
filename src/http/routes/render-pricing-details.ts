/**
 * `pricing_details` of a catalog entry: what the spec's `pricing` (prompt, completion, cached
 * prompt) leaves out, beside it so `pricing` keeps the spec's shape: cache-write prices by
 * retention, the price tiers by prompt size (docs/metering.md, "Price tiers"), announced price
 * changes, and the day the prices were checked against the provider's.
 */
import type { CatalogPricing, CatalogTokenPricing } from "../../catalog/types.js";

interface RenderedTokenPricing {
  prompt?: number;
  completion?: number;
  cached_prompt?: number;
  cache_write?: number;
  cache_write_1h?: number;
  cache_write_12h?: number;
}

export function renderPricingDetails(pricing: CatalogPricing) {
  const details: {
    cache_write?: number;
    cache_write_1h?: number;
    cache_write_12h?: number;
    tiers: RenderedTier[];
    scheduled?: Array<RenderedTokenPricing & { from: string; tiers: RenderedTier[] }>;
    checked_on?: string;
  } = { tiers: renderTiers(pricing.tiers ?? []) };
  const writes = renderTokenPricing(pricing);
  if (writes.cache_write !== undefined) details.cache_write = writes.cache_write;
  if (writes.cache_write_1h !== undefined) details.cache_write_1h = writes.cache_write_1h;
  if (writes.cache_write_12h !== undefined) details.cache_write_12h = writes.cache_write_12h;
  if (pricing.scheduled !== undefined) {
    details.scheduled = pricing.scheduled.map((change) => {
      const rendered = { from: change.from };
      return Object.assign(rendered, renderTokenPricing(change), { tiers: renderTiers(change.tiers) });
    });
  }
  if (pricing.checkedOn !== undefined) details.checked_on = pricing.checkedOn;
  return details;
}

type RenderedTier = RenderedTokenPricing & { above_prompt_tokens: number };

function renderTiers(tiers: NonNullable<CatalogPricing["tiers"]>): RenderedTier[] {
  return tiers.map((tier) => {
    const rendered = { above_prompt_tokens: tier.abovePromptTokens };
    return Object.assign(rendered, renderTokenPricing(tier.pricing));
  });
}

function renderTokenPricing(pricing: CatalogTokenPricing): RenderedTokenPricing {
  const rendered: RenderedTokenPricing = { prompt: pricing.prompt, completion: pricing.completion };
  if (pricing.cachedPrompt !== undefined) rendered.cached_prompt = pricing.cachedPrompt;
  if (pricing.cacheWrite !== undefined) rendered.cache_write = pricing.cacheWrite;
  if (pricing.cacheWrite1h !== undefined) rendered.cache_write_1h = pricing.cacheWrite1h;
  if (pricing.cacheWrite12h !== undefined) rendered.cache_write_12h = pricing.cacheWrite12h;
  return rendered;
}
