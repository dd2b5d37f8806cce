/** Builders of provider-adapter inputs (canonical request, provider, model, call) for adapter tests. */
import type { CanonicalRequest } from "../../src/canonical/index.js";
import type { CatalogModel, ProviderConfig } from "../../src/catalog/types.js";
import type { UpstreamCall } from "../../src/providers/provider-adapter.js";

export function createTestRequest(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: "test/model",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
    ...overrides,
  };
}

export function createTestProvider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: "test-provider",
    kind: "openai-compatible",
    baseUrl: "http://127.0.0.1:9/v1",
    apiKey: "sk-test-key-0123456789",
    timeouts: { connectMs: 2000, firstByteMs: 5000, responseMs: 5000, idleMs: 5000 },
    headers: {},
    quirks: { excludedParams: [], toolCallIdFormat: "any", maxTokensField: "max_completion_tokens" },
    ...overrides,
  };
}

export function createTestModel(): CatalogModel {
  return {
    slug: "test/model",
    name: "Test model",
    aliases: [],
    provider: { slug: "test", name: "Test" },
    description: "",
    releaseDate: "",
    contextLength: 128_000,
    maxOutputTokens: 16_384,
    pricingUsdPerMillion: { prompt: 1, completion: 2 },
    prices: {
      promptPicoUsd: 1_000_000n,
      completionPicoUsd: 2_000_000n,
      cachedPromptPicoUsd: 0n,
      cacheWritePicoUsd: 0n,
      cacheWrite1hPicoUsd: 0n,
    },
    features: ["tools", "streaming"],
    datacenterLocations: [],
    benchmarks: [],
    routes: [],
  };
}

export function createTestCall(
  options: {
    request?: Partial<CanonicalRequest>;
    provider?: Partial<ProviderConfig>;
    signal?: AbortSignal;
  } = {},
): UpstreamCall {
  return {
    request: createTestRequest(options.request),
    model: createTestModel(),
    provider: createTestProvider(options.provider),
    upstreamModel: "upstream-model-1",
    maxOutputTokens: 1024,
    signal: options.signal ?? new AbortController().signal,
    requestId: "req_test_0001",
  };
}
