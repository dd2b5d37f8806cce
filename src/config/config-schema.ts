/**
 * Schema of the YAML config file (`GATEWAY_CONFIG`). Field names stay snake_case as in the file;
 * `load-config.ts` turns the validated file into the runtime catalog.
 */

import { z } from "zod";
import { DEMO_PROVIDER_KIND, MODEL_FEATURES, PROVIDER_KINDS } from "../catalog/provider-kinds.js";
import { datetimeConfigSchema } from "./server-tools/datetime-config.js";
import { imageToolConfigSchema } from "./server-tools/image-config.js";
import { pdfToolConfigSchema } from "./server-tools/pdf-config.js";
import { webFetchConfigSchema } from "./server-tools/web-fetch-config.js";
import { webSearchConfigSchema } from "./server-tools/web-search-config.js";

/**
 * Another name of a model (docs/configuration.md, "Model names"): a provider's own id, its dotted
 * or dashed spelling, a dated snapshot. No slash: `<creator>/<alias>` is derived from it.
 */
export const modelAliasSchema = z
  .string()
  .max(200)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._:-]*$/, "letters, digits, '.', '_', ':' and '-', no slash");

/** A family of models (`claude-opus`): a name can stand for its newest member. */
const modelFamilySchema = z
  .string()
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase letters, digits, '.', '_' and '-'");

/** A name of the operator's `aliases` map: a bare name, or one of the `<creator>/<model>` form. */
const operatorAliasNameSchema = z
  .string()
  .max(200)
  .regex(
    /^[a-zA-Z0-9][a-zA-Z0-9._:-]*(\/[a-zA-Z0-9][a-zA-Z0-9._:-]*)?$/,
    "a model name: letters, digits, '.', '_', ':', '-', at most one '/'",
  );

/** A price in USD per 1M tokens; kept as the decimal text of the file so conversion is exact. */
const priceSchema = z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d+)?$/)]);

/** The price of each token class, USD per 1M tokens (a tier repeats every class the base gives). */
const tokenPriceFields = {
  prompt: priceSchema,
  completion: priceSchema,
  cached_prompt: priceSchema.optional(),
  /** Prompt-cache write at the provider's default retention (Anthropic 5 minutes, OpenAI 30 minutes). */
  cache_write: priceSchema.optional(),
  /** Prompt-cache write with Anthropic's 1-hour TTL. */
  cache_write_1h: priceSchema.optional(),
  /** Prompt-cache write with OpenAI's 12-hour `prompt_cache_retention`. */
  cache_write_12h: priceSchema.optional(),
};

const priceTierSchema = z.strictObject({
  above_prompt_tokens: z.int().positive(),
  ...tokenPriceFields,
});

export const providerConfigSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _"),
    kind: z.enum([...PROVIDER_KINDS, DEMO_PROVIDER_KIND]),
    /** Required for every kind but `demo`, which calls nothing. */
    base_url: z.url({ protocol: /^https?$/ }).optional(),
    api_key_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name")
      .optional(),
    /** Per-phase deadlines in milliseconds (docs/configuration.md, "Routing"). */
    timeouts: z
      .strictObject({
        connect_ms: z.int().positive().optional(),
        /** A streamed call's response head, while another route waits to be tried. */
        first_byte_ms: z.int().positive().optional(),
        /** A response head otherwise: a non-streamed call's whole answer, or the last route left. */
        response_ms: z.int().positive().optional(),
        idle_ms: z.int().positive().optional(),
      })
      .optional(),
    /** Extra request headers sent upstream (values are literal; secrets belong in api_key_env). */
    headers: z.record(z.string(), z.string()).optional(),
    /**
     * Per-host differences of OpenAI-compatible servers, as data (the adapter never branches on a
     * host's name): parameters the host rejects, the tool-call id shape it demands, the name of its
     * output-cap field.
     */
    quirks: z
      .strictObject({
        excluded_params: z.array(z.string()).default([]),
        tool_call_id_format: z.enum(["any", "alphanumeric-9"]).default("any"),
        max_tokens_field: z.enum(["max_completion_tokens", "max_tokens"]).default("max_completion_tokens"),
      })
      .optional(),
  })
  .refine((provider) => provider.kind === DEMO_PROVIDER_KIND || provider.base_url !== undefined, {
    message: "required for this kind",
    path: ["base_url"],
  });

/** What one call of a tool the model's provider runs itself costs. */
const nativeServerToolSchema = z.strictObject({ price_per_call_usd: priceSchema });

export const benchmarkSchema = z.strictObject({
  label: z.string().min(1),
  score: z.number(),
  unit: z.enum(["%", "elo", "pass@1"]).default("%"),
  mode: z.string().optional(),
  source_url: z.url(),
  tier: z.enum(["primary", "extra"]),
});

export const modelConfigSchema = z.strictObject({
  slug: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._:-]*$/, "<creator>/<model>"),
  name: z.string().min(1),
  provider: z.strictObject({
    slug: z.string().min(1),
    name: z.string().min(1),
    brand_color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/)
      .optional(),
  }),
  description: z.string(),
  release_date: z.union([z.literal(""), z.iso.date()]).default(""),
  /**
   * Other names that resolve to this model, shown in `GET /api/v1/models` as `aliases` (the
   * provider's own ids, dotted and dashed spellings, dated snapshots).
   */
  aliases: z.array(modelAliasSchema).max(50).default([]),
  /** The family a name of the operator's `aliases` map may stand for (its newest member). */
  family: modelFamilySchema.optional(),
  context_length: z.int().positive(),
  max_output_tokens: z.int().positive(),
  pricing: z.strictObject(tokenPriceFields).extend({
    /**
     * Dearer prices for larger prompts (docs/metering.md, "Price tiers"), ascending: a request
     * whose prompt has more than `above_prompt_tokens` tokens (cache reads and writes included) is
     * billed entirely at the tier's prices.
     */
    tiers: z.array(priceTierSchema).max(10).default([]),
    /**
     * Announced price changes (an introductory price ending), ascending: from 00:00 UTC of `from`
     * on, the entry's prices (and tiers) replace all of the above.
     */
    scheduled: z
      .array(
        z.strictObject(tokenPriceFields).extend({
          from: z.iso.date(),
          tiers: z.array(priceTierSchema).max(10).default([]),
        }),
      )
      .max(10)
      .default([]),
    /** The day these prices were last checked against the provider's published pricing. */
    checked_on: z.iso.date().optional(),
  }),
  features: z.array(z.enum(MODEL_FEATURES)),
  datacenter_locations: z.array(z.string()),
  hugging_face_id: z.string().optional(),
  benchmarks: z.array(benchmarkSchema).default([]),
  weekly_token_volume: z.int().nonnegative().optional(),
  /**
   * The server tools this model's provider runs itself, and what one call costs: a request that
   * activates one runs it there by default, on the routes whose adapter can send it
   * (docs/server-tools.md, "Tools the provider runs"). Absent: the gateway runs its own.
   */
  native_server_tools: z
    .strictObject({
      web_search: nativeServerToolSchema.optional(),
      web_fetch: nativeServerToolSchema.optional(),
    })
    .optional(),
  routes: z
    .array(z.strictObject({ provider: z.string().min(1), model: z.string().min(1) }))
    .min(1, "at least one route"),
});

export const gatewayConfigSchema = z.strictObject({
  providers: z.array(providerConfigSchema).min(1),
  models: z.array(modelConfigSchema).min(1),
  /**
   * The operator's names: each maps to a catalog slug, or to `{ family }`, the newest model of
   * that family by release_date (docs/configuration.md, "Model names").
   */
  aliases: z
    .record(
      operatorAliasNameSchema,
      z.union([z.string().min(1), z.strictObject({ family: modelFamilySchema })]),
    )
    .default({}),
  limits: z
    .strictObject({
      /** Largest accepted request body; larger → payload_too_large 413. */
      max_body_bytes: z
        .int()
        .positive()
        .default(10 * 1024 * 1024),
      /** Requests per minute of a key without its own value (`key update --rpm`); unset: unlimited. */
      default_requests_per_minute: z.int().positive().optional(),
      /**
       * How long a spend reservation outlives its instance: leases are refreshed every third of
       * this while a request runs, so only a crashed (or Redis-less) instance lets one expire.
       */
      reservation_ttl_seconds: z.int().min(10).max(3600).default(120),
      /**
       * After Redis comes back without its memory, how long nothing is admitted against a spend
       * limit or balance while every instance publishes its reservations in flight again.
       */
      limit_store_recovery_seconds: z.int().min(1).max(120).default(5),
      /**
       * Instances renew a lease (heartbeat) in Redis; one whose lease is this old has died, and
       * another instance settles its requests as interrupted (docs/durability.md).
       */
      instance_lease_seconds: z.int().min(2).max(3600).default(60),
      /**
       * Caps on what one request may carry, refused with `invalid_request` before it is validated
       * (validating and converting cost time in proportion; docs/limits.md, "Bounded work").
       */
      max_messages: z.int().positive().default(10_000),
      max_content_parts: z.int().positive().default(20_000),
      max_tools: z.int().positive().default(1_000),
      /**
       * The longest one generation may run, streamed or not; then it is stopped (provider_timeout)
       * and settled. A record still in progress well past it belongs to an instance that died, and
       * is settled as interrupted by another one (docs/durability.md).
       */
      max_request_seconds: z.int().min(1).max(86_400).default(3600),
      /**
       * A streaming client that takes no bytes for this long while the gateway has output for it
       * is disconnected, its upstream request aborted and its record settled (docs/metering.md).
       */
      client_read_timeout_seconds: z.int().min(1).max(3600).default(60),
      /**
       * Bytes of complete answers that may wait for clients not reading them, for the whole
       * instance; past it the answers waiting longest are let go (docs/operations.md).
       */
      held_answers_bytes: z
        .int()
        .min(1024 * 1024)
        .default(256 * 1024 * 1024),
      /**
       * A Responses WebSocket with no turn running and no message from its client for this long is
       * closed; what it kept of its last response goes with it (docs/formats.md, "WebSocket mode").
       */
      websocket_idle_timeout_seconds: z.int().min(1).max(86_400).default(300),
    })
    .prefault({}),
  /**
   * Failover, retries and circuit breaking across a model's routes (docs/configuration.md,
   * "Routing"). Only failures before any output reached the client are retried or failed over.
   */
  routing: z
    .strictObject({
      /** Extra passes over the candidates after each failed with an error another try could fix. */
      retries: z.int().min(0).max(5).default(1),
      /** First backoff between passes; doubled each further pass, with full jitter. */
      retry_base_delay_ms: z.int().min(0).max(10_000).default(200),
      /** Longest upstream Retry-After honoured; a route asking for longer is not tried again. */
      max_retry_after_ms: z.int().min(0).max(60_000).default(5_000),
      /** No new attempt starts later than this after the request arrived (and never past max_request_seconds). */
      failover_deadline_seconds: z.int().min(1).max(3600).default(60),
      /** Consecutive fixable failures that open a route's circuit breaker. */
      breaker_failures: z.int().min(1).max(1000).default(5),
      /** How long an open breaker skips its route before one request probes it. */
      breaker_cooldown_seconds: z.int().min(1).max(3600).default(30),
      /**
       * Requests with the same prompt-cache key (or long prompt prefix) go to the same one of a
       * model's routes, so the provider's prompt cache hits; false keeps the catalog order for all.
       */
      prompt_cache_affinity: z.boolean().default(true),
    })
    .prefault({}),
  /**
   * The exact response cache (docs/response-cache.md): what one stored answer and the embedded
   * store may hold, and the longest time-to-live a request or policy may ask for.
   */
  response_cache: z
    .strictObject({
      /** An answer larger than this (its canonical JSON) is not stored. */
      max_entry_bytes: z
        .int()
        .min(1024)
        .max(16 * 1024 * 1024)
        .default(1024 * 1024),
      /** Embedded mode: the in-process store's size; the least recently used answers go first. */
      memory_bytes: z
        .int()
        .min(1024 * 1024)
        .max(4 * 1024 * 1024 * 1024)
        .default(64 * 1024 * 1024),
      /** The longest time-to-live a request, key or workspace may set. */
      max_ttl_seconds: z
        .int()
        .min(1)
        .max(30 * 86_400)
        .default(86_400),
    })
    .prefault({}),
  bootstrap: z
    .strictObject({
      /** Credit (USD) of the default workspace created on first embedded start. */
      default_workspace_credits_usd: priceSchema.default("5"),
    })
    .prefault({}),
  /**
   * Cross-origin calls from browsers to the public API (docs/configuration.md, "CORS"): `*`, or
   * the origins allowed (`https://app.example.com`); an empty list turns CORS off. Never applies
   * to the internal and admin routes.
   */
  cors: z
    .strictObject({
      allowed_origins: z
        .array(z.string().refine(isOriginOrWildcard, "`*` or an origin: scheme://host[:port], no path"))
        .refine((origins) => !origins.includes("*") || origins.length === 1, "`*` stands alone")
        .default(["*"]),
    })
    .prefault({}),
  /**
   * `GET /metrics` (docs/operations.md, "Metrics"): served unless `enabled` is false; with
   * `require_internal_token`, only to callers presenting the internal token.
   */
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      require_internal_token: z.boolean().default(false),
    })
    .prefault({}),
  server_tools: z
    .strictObject({
      /** Upstream rounds one request with server tools may make in all (docs/server-tools.md). */
      max_rounds: z.int().min(1).max(50).default(8),
      /**
       * The most calls of one tool a provider running it itself may make in one upstream round
       * (sent as its `max_uses` / `max_tool_calls`; the reservation holds this many calls).
       */
      max_native_calls_per_round: z.int().min(1).max(50).default(5),
      /** Absent: web_search is not configured, and activating it is refused. */
      web_search: webSearchConfigSchema.optional(),
      web_fetch: webFetchConfigSchema.prefault({}),
      datetime: datetimeConfigSchema,
      /** How PDFs in requests reach models that do not read them (docs/server-tools-media.md). */
      pdf: pdfToolConfigSchema.prefault({}),
      /** Absent: image generation is not configured, and activating `image` is refused. */
      image: imageToolConfigSchema.optional(),
    })
    .prefault({}),
});

/** `*`, or an http(s) origin written as browsers send it in `Origin` (no path, query or trailing slash). */
function isOriginOrWildcard(value: string): boolean {
  if (value === "*") return true;
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value.toLowerCase();
  } catch {
    return false;
  }
}

export type ProviderConfigFile = z.infer<typeof providerConfigSchema>;
export type ModelConfigFile = z.infer<typeof modelConfigSchema>;
export type GatewayConfigFile = z.infer<typeof gatewayConfigSchema>;
