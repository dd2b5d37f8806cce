/**
 * A response-cache hit served as one attempt of the ordinary run: a route whose "upstream" is the
 * stored answer. The run, its settlement and the caller's encoder (streamed or not) are the same
 * code as for a provider's answer, so a hit answers in any format and a streamed hit is replayed
 * as a stream; the record's attempt names the cache as its provider.
 */
import { type CanonicalResult, createEmptyUsage } from "../canonical/index.js";
import type { CatalogModel, ConfiguredProviderKind, ProviderConfig } from "../catalog/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import { convertResultToParts } from "../providers/shared/convert-result-to-parts.js";
import type { AdapterRegistry } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";

/** The provider id a hit's attempt and record carry (`upstream_provider`). */
export const RESPONSE_CACHE_PROVIDER = "response-cache";

/** The pseudo-route a hit is served by: the model's own, answered by the stored result. */
export function createCacheCandidate(model: CatalogModel): RouteCandidate {
  const provider: ProviderConfig = {
    id: RESPONSE_CACHE_PROVIDER,
    // Never in a catalog: only the replay registry below answers for this kind.
    kind: RESPONSE_CACHE_PROVIDER as ConfiguredProviderKind,
    baseUrl: "",
    timeouts: { connectMs: 1_000, firstByteMs: 1_000, responseMs: 1_000, idleMs: 1_000 },
    headers: {},
    quirks: { excludedParams: [], toolCallIdFormat: "any", maxTokensField: "max_tokens" },
  };
  return {
    model,
    route: { provider, upstreamModel: model.slug },
    key: `${RESPONSE_CACHE_PROVIDER}/${model.slug}`,
  };
}

/**
 * The adapters for a hit's run: the cache's kind replays `stored`, with no usage (no provider
 * processed anything); every other kind is the gateway's own.
 */
export function createReplayRegistry(stored: CanonicalResult, adapters: AdapterRegistry): AdapterRegistry {
  const result: CanonicalResult = {
    upstreamId: stored.upstreamId,
    upstreamModel: stored.upstreamModel,
    content: stored.content,
    finishReason: stored.finishReason,
    usage: createEmptyUsage(),
  };
  if (stored.stopSequence !== undefined) result.stopSequence = stored.stopSequence;
  const replay: ProviderAdapter = {
    kind: RESPONSE_CACHE_PROVIDER,
    inputRules: { tokenizer: "o200k", imageTokens: () => 0, pdfPageTokens: 0, toolPromptTokens: 0 },
    async generate() {
      return result;
    },
    async *stream(call) {
      for (const part of convertResultToParts(result)) {
        if (call.signal.aborted)
          throw new GatewayError("provider_timeout", "The cached answer was abandoned");
        yield part;
      }
    },
  };
  const registry = new Map(adapters);
  registry.set(RESPONSE_CACHE_PROVIDER as ConfiguredProviderKind, replay);
  return registry;
}
