/**
 * Reads and validates the YAML config, then builds the runtime catalog. A bad file stops the
 * process with a message naming the field (`models[3].pricing.prompt: …`).
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import type { CatalogModel, ProviderConfig } from "../catalog/types.js";
import { tryParseUsdToMicroUsd } from "../metering/money.js";
import { buildModelNames, ModelNameError } from "./build-model-names.js";
import { ConfigError } from "./config-error.js";
import {
  type GatewayConfigFile,
  gatewayConfigSchema,
  type ModelConfigFile,
  type ProviderConfigFile,
} from "./config-schema.js";
import type { GatewayConfig } from "./gateway-config.js";
import { resolveModelPrices, resolvePricingForCatalog } from "./resolve-model-prices.js";
import { isImageGenerationConfigured, resolveImageToolSettings } from "./server-tools/image-config.js";

/**
 * A stalled route is left within seconds when another one waits (connect, first byte); a call with
 * nowhere to fail over to, or whose head only comes with the whole answer (non-streamed), waits as
 * long as an answer may take to start (response).
 */
const DEFAULT_TIMEOUTS = { connectMs: 10_000, firstByteMs: 15_000, responseMs: 120_000, idleMs: 120_000 };

export { ConfigError };

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
  return buildConfig(raw, env, path);
}

export function buildConfig(raw: unknown, env: NodeJS.ProcessEnv, origin = "config"): GatewayConfig {
  const parsed = gatewayConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${origin}: ${describeIssues(parsed.error.issues)}`);
  return resolveConfig(parsed.data, env, origin);
}

function describeIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
    .join("; ");
}

function formatPath(path: PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : `${out ? "." : ""}${String(segment)}`;
  }
  return out || "(root)";
}

function resolveConfig(file: GatewayConfigFile, env: NodeJS.ProcessEnv, origin: string): GatewayConfig {
  const providers = new Map<string, ProviderConfig>();
  file.providers.forEach((provider, index) => {
    if (providers.has(provider.id)) {
      throw new ConfigError(`${origin}: providers[${index}].id: duplicate provider id "${provider.id}"`);
    }
    providers.set(provider.id, {
      id: provider.id,
      kind: provider.kind,
      baseUrl: (provider.base_url ?? "").replace(/\/+$/, ""),
      apiKeyEnv: provider.api_key_env,
      apiKey: provider.api_key_env ? env[provider.api_key_env] || undefined : undefined,
      timeouts: readProviderTimeouts(provider.timeouts),
      headers: provider.headers ?? {},
      quirks: {
        excludedParams: provider.quirks?.excluded_params ?? [],
        toolCallIdFormat: provider.quirks?.tool_call_id_format ?? "any",
        maxTokensField: provider.quirks?.max_tokens_field ?? "max_completion_tokens",
      },
    });
  });

  const modelsBySlug = new Map<string, CatalogModel>();
  file.models.forEach((model, index) => {
    const where = `${origin}: models[${index}]`;
    if (modelsBySlug.has(model.slug)) throw new ConfigError(`${where}.slug: duplicate slug "${model.slug}"`);
    modelsBySlug.set(model.slug, resolveModel(model, providers, where));
  });
  const models = [...modelsBySlug.values()];
  let modelNames: GatewayConfig["modelNames"];
  try {
    modelNames = buildModelNames(models, file.aliases);
  } catch (error) {
    if (error instanceof ModelNameError) throw new ConfigError(`${origin}: ${error.message}`);
    throw error;
  }

  return {
    providers: [...providers.values()],
    models,
    modelsBySlug,
    modelNames,
    maxBodyBytes: file.limits.max_body_bytes,
    requestShape: {
      maxMessages: file.limits.max_messages,
      maxContentParts: file.limits.max_content_parts,
      maxTools: file.limits.max_tools,
    },
    defaultRequestsPerMinute: file.limits.default_requests_per_minute ?? null,
    reservationTtlMs: file.limits.reservation_ttl_seconds * 1000,
    limitStoreRecoveryMs: file.limits.limit_store_recovery_seconds * 1000,
    instanceLeaseMs: file.limits.instance_lease_seconds * 1000,
    maxRequestMs: file.limits.max_request_seconds * 1000,
    clientReadTimeoutMs: file.limits.client_read_timeout_seconds * 1000,
    heldAnswersBytes: file.limits.held_answers_bytes,
    webSocketIdleTimeoutMs: file.limits.websocket_idle_timeout_seconds * 1000,
    routing: {
      retries: file.routing.retries,
      retryBaseDelayMs: file.routing.retry_base_delay_ms,
      maxRetryAfterMs: file.routing.max_retry_after_ms,
      failoverDeadlineMs: file.routing.failover_deadline_seconds * 1000,
      breakerFailures: file.routing.breaker_failures,
      breakerCooldownMs: file.routing.breaker_cooldown_seconds * 1000,
      promptCacheAffinity: file.routing.prompt_cache_affinity,
    },
    responseCache: {
      maxEntryBytes: file.response_cache.max_entry_bytes,
      memoryBytes: file.response_cache.memory_bytes,
      maxTtlSeconds: file.response_cache.max_ttl_seconds,
    },
    defaultWorkspaceCreditsMicroUsd: parseBootstrapCredits(
      file.bootstrap.default_workspace_credits_usd,
      origin,
    ),
    imageGenerationConfigured:
      file.server_tools.image !== undefined &&
      isImageGenerationConfigured(resolveImageToolSettings(file.server_tools.image, env)),
    serverTools: {
      maxRounds: file.server_tools.max_rounds,
      maxNativeCallsPerRound: file.server_tools.max_native_calls_per_round,
      ...(file.server_tools.web_search === undefined ? {} : { webSearch: file.server_tools.web_search }),
      webFetch: file.server_tools.web_fetch,
      datetime: file.server_tools.datetime,
      pdf: file.server_tools.pdf,
      ...(file.server_tools.image === undefined ? {} : { image: file.server_tools.image }),
    },
    cors: { allowedOrigins: file.cors.allowed_origins.map((origin) => origin.toLowerCase()) },
    metrics: {
      enabled: file.metrics.enabled,
      requireInternalToken: file.metrics.require_internal_token,
    },
  };
}

function resolveModel(
  model: ModelConfigFile,
  providers: Map<string, ProviderConfig>,
  where: string,
): CatalogModel {
  const routes = model.routes.map((route, routeIndex) => {
    const provider = providers.get(route.provider);
    if (!provider) {
      throw new ConfigError(`${where}.routes[${routeIndex}].provider: unknown provider "${route.provider}"`);
    }
    return { provider, upstreamModel: route.model };
  });
  return {
    slug: model.slug,
    name: model.name,
    aliases: [...new Set(model.aliases)],
    family: model.family,
    provider: {
      slug: model.provider.slug,
      name: model.provider.name,
      brandColor: model.provider.brand_color,
    },
    description: model.description,
    releaseDate: model.release_date,
    contextLength: model.context_length,
    maxOutputTokens: model.max_output_tokens,
    pricingUsdPerMillion: resolvePricingForCatalog(model.pricing),
    prices: resolveModelPrices(model, `${where}.pricing`),
    features: model.features,
    datacenterLocations: model.datacenter_locations,
    huggingFaceId: model.hugging_face_id,
    benchmarks: model.benchmarks.map((benchmark) => ({
      label: benchmark.label,
      score: benchmark.score,
      unit: benchmark.unit,
      mode: benchmark.mode,
      sourceUrl: benchmark.source_url,
      tier: benchmark.tier,
    })),
    weeklyTokenVolume: model.weekly_token_volume,
    nativeServerTools: resolveNativeServerTools(model, where),
    routes,
  };
}

function resolveNativeServerTools(
  model: ModelConfigFile,
  where: string,
): NonNullable<CatalogModel["nativeServerTools"]> {
  const tools: NonNullable<CatalogModel["nativeServerTools"]> = {};
  for (const [tool, entry] of Object.entries(model.native_server_tools ?? {})) {
    if (entry === undefined) continue;
    const price = tryParseUsdToMicroUsd(entry.price_per_call_usd);
    if (!price.ok) {
      throw new ConfigError(`${where}.native_server_tools.${tool}.price_per_call_usd: ${price.reason}`);
    }
    tools[tool as keyof typeof tools] = { pricePerCallMicroUsd: price.microUsd };
  }
  return tools;
}

function parseBootstrapCredits(value: number | string, origin: string): number {
  const result = tryParseUsdToMicroUsd(value);
  if (!result.ok)
    throw new ConfigError(`${origin}: bootstrap.default_workspace_credits_usd: ${result.reason}`);
  return result.microUsd;
}

/**
 * The provider's deadlines. The response deadline is never shorter than the first-byte one: a
 * setting written when `first_byte_ms` was the only head deadline (a long one, for slow
 * non-streamed answers) keeps its meaning.
 */
function readProviderTimeouts(timeouts: ProviderConfigFile["timeouts"]): ProviderConfig["timeouts"] {
  const firstByteMs = timeouts?.first_byte_ms ?? DEFAULT_TIMEOUTS.firstByteMs;
  return {
    connectMs: timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
    firstByteMs,
    responseMs: timeouts?.response_ms ?? Math.max(DEFAULT_TIMEOUTS.responseMs, firstByteMs),
    idleMs: timeouts?.idle_ms ?? DEFAULT_TIMEOUTS.idleMs,
  };
}
