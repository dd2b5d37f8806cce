/**
 * `GET /api/v1/models`: the public catalog, and `GET /api/v1/models/{slug}`: one model
 * (the slug holds a slash, sent as is or percent-encoded as `%2F`, as the openai SDK's
 * `models.retrieve` does). Each entry also carries `id`, the slug again, because OpenAI-style
 * clients (`openai.models.list()`) read a model's name from `id`, and `aliases`, the other names a
 * request may use for it. One model is found by any name a request may use (an alias, a bare
 * name), and answered under its slug. Beside the spec's `pricing`, `pricing_details` carries the
 * prices it has no field for (render-pricing-details.ts). Rendered once; the catalog is static.
 */
import { z } from "zod";
import type { CatalogModel } from "../../catalog/types.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { catalogModelSchema, commonErrorSchema, modelListSchema } from "../openapi/openapi-schemas.js";
import { jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { renderPricingDetails } from "./render-pricing-details.js";

export function renderCatalogModel(model: CatalogModel) {
  return {
    id: model.slug,
    slug: model.slug,
    aliases: model.aliases,
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
    pricing_details: renderPricingDetails(model.pricingUsdPerMillion),
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

export function createModelsRoutes(config: GatewayConfig): RouteDefinition[] {
  const entries = config.models.map(renderCatalogModel);
  const body = JSON.stringify({
    data: entries,
    meta: { image_generation_configured: config.imageGenerationConfigured },
  });
  const bodies = new Map(entries.map((entry) => [entry.slug, JSON.stringify(entry)]));
  return [
    {
      method: "GET",
      path: "/api/v1/models",
      summary: "The public model catalog",
      responses: { 200: jsonResponse(modelListSchema, "Catalog") },
      handler: (c) => {
        c.header("Content-Type", "application/json");
        c.header("Cache-Control", "public, max-age=60");
        return c.body(body);
      },
    },
    {
      method: "GET",
      path: "/api/v1/models/{slug}",
      paramPatterns: { slug: ".+" },
      summary: "One model of the catalog",
      description:
        "The slug contains a slash; send it as is or percent-encoded (`openai%2Fgpt-4.1`). Any name a request may use for the model (an alias, a bare model name) finds it too.",
      request: { params: z.object({ slug: z.string().meta({ example: "openai/gpt-4.1" }) }) },
      responses: {
        200: jsonResponse(catalogModelSchema, "The model"),
        404: jsonResponse(commonErrorSchema, "No such model (invalid_request)"),
      },
      handler: (c) => {
        const name = c.req.param("slug") ?? "";
        const slug = config.modelNames.byName.get(name)?.slug;
        const model = slug === undefined ? undefined : bodies.get(slug);
        if (model === undefined) {
          // No suggestions here: the route needs no key, so an unknown name costs one lookup.
          const candidates = config.modelNames.ambiguous.get(name);
          const message =
            candidates === undefined
              ? `No model "${truncateName(name)}" in the catalog`
              : `Model name "${name}" is ambiguous: it names ${candidates.map((entry) => entry.slug).join(", ")}`;
          const error = GatewayError.invalidRequest(message, "slug");
          return c.json(createCommonErrorEnvelope(error, c.requestId), 404);
        }
        c.header("Content-Type", "application/json");
        c.header("Cache-Control", "public, max-age=60");
        return c.body(model);
      },
    },
  ];
}

/** An unknown name as the 404 repeats it: at most 200 characters. */
function truncateName(name: string): string {
  return name.length > 200 ? `${name.slice(0, 200)}…` : name;
}
