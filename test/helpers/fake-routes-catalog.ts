/**
 * A gateway catalog with one provider and one model per loopback fake, for tests that need routes
 * of several provider kinds: model `test/<id>-model` routes to provider `<id>` of the given kind.
 */
export interface FakeRoute {
  /** Provider id, also in the model's slug. */
  id: string;
  kind: "openai-compatible" | "openai-chat" | "openai-responses" | "anthropic" | "google";
  baseUrl: string;
}

export function createFakeRoutesCatalog(
  routes: FakeRoute[],
  model: { contextLength: number; pricing: Record<string, string>; features?: string[] },
) {
  return {
    providers: routes.map((route) => ({
      id: route.id,
      kind: route.kind,
      base_url: route.baseUrl,
      api_key_env: "FAKE_UPSTREAM_KEY",
      timeouts: { connect_ms: 2_000, first_byte_ms: 20_000, response_ms: 20_000, idle_ms: 20_000 },
    })),
    models: routes.map((route) => ({
      slug: `test/${route.id}-model`,
      name: route.id,
      provider: { slug: "test", name: "Test" },
      description: "A model served by a loopback fake",
      release_date: "2026-01-01",
      context_length: model.contextLength,
      max_output_tokens: 4_096,
      pricing: model.pricing,
      features: model.features ?? ["tools", "streaming", "vision"],
      datacenter_locations: ["local"],
      routes: [{ provider: route.id, model: `${route.id}-upstream-model` }],
    })),
  };
}
