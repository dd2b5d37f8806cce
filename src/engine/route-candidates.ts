/**
 * The routes one request may be served by, in the order they are tried: the requested model's
 * routes in catalog order, then those of each alternative the request named (`models`), skipping
 * repeats. Every model among them has passed the key's allowlist before this list exists, so a
 * fallback can never reach a model the key may not use.
 */
import type { CatalogModel, ModelRoute } from "../catalog/types.js";

export interface RouteCandidate {
  model: CatalogModel;
  route: ModelRoute;
  /** Identifies the route for its circuit breaker and in the attempt records. */
  key: string;
}

export function listRouteCandidates(models: readonly CatalogModel[]): RouteCandidate[] {
  const candidates: RouteCandidate[] = [];
  const seen = new Set<string>();
  for (const model of models) {
    for (const route of model.routes) {
      const key = `${route.provider.id}/${route.upstreamModel}`;
      // The same upstream model behind two catalog models is still one route: tried once.
      if (seen.has(key)) continue;
      seen.add(key);
      candidates.push({ model, route, key });
    }
  }
  return candidates;
}
