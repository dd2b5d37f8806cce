/** `GET /api/v1/models`: the public catalog (spec §2.9). Rendered once; the catalog is static. */
import { Hono } from "hono";
import type { CatalogModel, GatewayConfig } from "../../config/types.js";
import type { AppEnv } from "../app-env.js";

export function renderCatalogModel(model: CatalogModel) {
  return {
    slug: model.slug,
    name: model.name,
    provider: {
      slug: model.provider.slug,
      name: model.provider.name,
      ...(model.provider.brandColor ? { brand_color: model.provider.brandColor } : {}),
    },
    description: model.description,
    release_date: model.releaseDate,
    context_length: model.contextLength,
    max_output_tokens: model.maxOutputTokens,
    pricing: {
      prompt: model.pricingUsdPerMillion.prompt,
      completion: model.pricingUsdPerMillion.completion,
      ...(model.pricingUsdPerMillion.cachedPrompt === undefined
        ? {}
        : { cached_prompt: model.pricingUsdPerMillion.cachedPrompt }),
    },
    features: model.features,
    datacenter_locations: model.datacenterLocations,
    ...(model.huggingFaceId ? { hugging_face_id: model.huggingFaceId } : {}),
    benchmarks: [...model.benchmarks]
      .sort((a, b) => (a.tier === b.tier ? 0 : a.tier === "primary" ? -1 : 1))
      .map((benchmark) => ({
        label: benchmark.label,
        score: benchmark.score,
        unit: benchmark.unit,
        ...(benchmark.mode ? { mode: benchmark.mode } : {}),
        source_url: benchmark.sourceUrl,
        tier: benchmark.tier,
      })),
    ...(model.weeklyTokenVolume === undefined ? {} : { weekly_token_volume: model.weeklyTokenVolume }),
  };
}

export function createModelsRoute(config: GatewayConfig) {
  const body = JSON.stringify({
    data: config.models.map(renderCatalogModel),
    meta: { image_generation_configured: config.imageGenerationConfigured },
  });
  const app = new Hono<AppEnv>();
  app.get("/api/v1/models", (c) => {
    c.header("Content-Type", "application/json");
    c.header("Cache-Control", "public, max-age=60");
    return c.body(body);
  });
  return app;
}
