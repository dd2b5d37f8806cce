/**
 * Zod schemas of the responses that are not an ingress format's own (catalog, generation lookup,
 * health, errors). They exist to document the API in /openapi.json; the renderers in routes/
 * produce exactly these shapes (test/openapi.test.ts checks real responses against them).
 */
import { z } from "zod";
import { ERROR_CODES } from "../../errors/catalog.js";

export const errorCodeSchema = z.enum(ERROR_CODES as [string, ...string[]]).meta({ id: "ErrorCode" });

export const commonErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().meta({ example: "invalid_request_error" }),
      code: errorCodeSchema,
      param: z.string().nullable().optional(),
      request_id: z.string().optional(),
      retry_after_seconds: z.int().min(1).max(120).optional().meta({
        description: "Present exactly when the Retry-After header is set (the five retryable codes)",
      }),
    }),
  })
  .meta({ id: "Error" });

export const messagesErrorSchema = z
  .object({
    type: z.literal("error"),
    error: z.object({
      type: z.string(),
      code: errorCodeSchema,
      message: z.string(),
      retry_after_seconds: z.int().min(1).max(120).optional(),
      details: z.object({ error_code: z.string() }).loose().optional().meta({
        description:
          "a machine-readable reason, e.g. `thread_unsupported_request` for a request with `thread`",
      }),
    }),
    request_id: z.string().optional(),
  })
  .meta({ id: "MessagesError" });

const tokenPricingFields = {
  prompt: z.number(),
  completion: z.number(),
  cached_prompt: z.number().optional(),
  cache_write: z.number().optional(),
  cache_write_1h: z.number().optional(),
  cache_write_12h: z.number().optional(),
};

const pricingDetailsSchema = z
  .object({
    cache_write: z.number().optional().meta({
      description:
        "prompt-cache write at the provider's default retention (Anthropic 5 minutes, OpenAI 30 minutes)",
    }),
    cache_write_1h: z
      .number()
      .optional()
      .meta({ description: "prompt-cache write with a 1-hour TTL (Anthropic)" }),
    cache_write_12h: z
      .number()
      .optional()
      .meta({ description: "prompt-cache write with 12-hour retention (OpenAI `prompt_cache_retention`)" }),
    tiers: z.array(z.object({ above_prompt_tokens: z.int() }).extend(tokenPricingFields)).meta({
      description:
        "ascending: a request whose prompt (cache reads and writes included) has more than `above_prompt_tokens` tokens is billed entirely at the tier's prices",
    }),
    scheduled: z
      .array(
        z
          .object({
            from: z.string(),
            tiers: z.array(z.object({ above_prompt_tokens: z.int() }).extend(tokenPricingFields)),
          })
          .extend(tokenPricingFields),
      )
      .optional()
      .meta({
        description:
          "announced price changes: from 00:00 UTC of `from` (YYYY-MM-DD) on, these prices and tiers replace `pricing` and the ones above",
      }),
    checked_on: z
      .string()
      .optional()
      .meta({ description: "YYYY-MM-DD: when the prices were checked against the provider's" }),
  })
  .meta({ description: 'prices beside `pricing`, USD per 1M tokens (docs/metering.md, "Price tiers")' });

export const catalogModelSchema = z
  .object({
    id: z
      .string()
      .meta({ description: "the slug again, for OpenAI-style clients", example: "openai/gpt-4.1" }),
    slug: z.string().meta({ example: "openai/gpt-4.1" }),
    aliases: z.array(z.string()).meta({
      description:
        "other names that resolve to this model in a request's `model` (the provider's own ids, dated snapshots, the operator's names); its slug's model part resolves too when no other slug shares it",
      example: ["gpt-4.1-2025-04-14"],
    }),
    name: z.string(),
    provider: z.object({ slug: z.string(), name: z.string(), brand_color: z.string().optional() }),
    description: z.string(),
    release_date: z.string().meta({ description: "YYYY-MM-DD, empty when unset" }),
    context_length: z.int(),
    max_output_tokens: z.int(),
    pricing: z
      .object({ prompt: z.number(), completion: z.number(), cached_prompt: z.number().optional() })
      .meta({ description: "USD per 1M tokens" }),
    pricing_details: pricingDetailsSchema,
    features: z.array(z.enum(["tools", "vision", "json_mode", "reasoning", "streaming", "prompt_caching"])),
    datacenter_locations: z.array(z.string()),
    hugging_face_id: z.string().optional(),
    benchmarks: z.array(
      z.object({
        label: z.string(),
        score: z.number(),
        unit: z.enum(["%", "elo", "pass@1"]),
        mode: z.string().optional(),
        source_url: z.string(),
        tier: z.enum(["primary", "extra"]),
      }),
    ),
    weekly_token_volume: z.int().optional(),
  })
  .meta({ id: "CatalogModel" });

export const modelListSchema = z
  .object({
    data: z.array(catalogModelSchema),
    meta: z.object({ image_generation_configured: z.boolean() }),
  })
  .meta({ id: "ModelList" });

export const generationSchema = z
  .object({
    data: z.object({
      id: z.string(),
      model: z.string(),
      ingress_format: z.enum(["chat_completions", "responses", "anthropic_messages"]),
      source: z.enum(["api", "playground", "chat"]),
      status: z.enum(["in_progress", "ok", "error", "cancelled", "interrupted"]).meta({
        description:
          "interrupted: the instance running the request died; another one settled it (docs/durability.md)",
      }),
      stream: z.boolean(),
      upstream_provider: z.string().nullable(),
      upstream_model: z.string().nullable(),
      tokens_prompt: z.int(),
      tokens_completion: z.int(),
      tokens_reasoning: z.int(),
      tokens_cached_prompt: z.int(),
      tokens_cache_write: z.int(),
      total_cost: z.number().meta({ description: "credits (USD)" }),
      cost_micro_usd: z.string().meta({ description: "exact micro-USD of total_cost" }),
      tool_costs_micro_usd: z.record(z.string(), z.string()),
      latency_ms: z.int().nullable(),
      finish_reason: z.string().nullable(),
      // A union, not .nullable(): that renders as allOf [ErrorCode, string|null], which null fails.
      error_code: z.union([errorCodeSchema, z.null()]),
      created_at: z.string(),
      finished_at: z.string().nullable(),
      usage_estimated: z.boolean().meta({
        description:
          "true when the token counts and cost are the gateway's estimate: the upstream reported no usage, or the request ended before it did (docs/metering.md)",
      }),
      attempts: z
        .array(
          z.object({
            provider: z.string(),
            model: z.string(),
            upstream_model: z.string(),
            outcome: z.string().meta({
              description:
                "`ok`, the error code the attempt failed with, `cancelled`, or `circuit_open` (skipped)",
            }),
            latency_ms: z.int(),
            dropped: z.array(z.string()).meta({
              description:
                "what this route's upstream went without (docs/formats.md, Leniency and the drop report)",
            }),
          }),
        )
        .meta({
          description:
            "every upstream call, in order (docs/configuration.md, Routing); only the one that served is billed",
        }),
      dropped: z.array(z.string()).meta({
        description:
          "what the serving route's upstream went without, as `X-Hi-Dropped` named it: `tools[4](namespace)`, `thinking.display`, a passthrough field",
      }),
      session_id: z.string().nullable().meta({
        description:
          "the agent client's session, from its x-claude-code-session-id, session-id or x-session-id header (at most 128 characters); null when it sent none",
      }),
      client: z.string().nullable().meta({
        description:
          "the client's name: its User-Agent's first product token (`claude-cli/2.1.332`, at most 128 characters); null without one",
      }),
      cache_hit: z.boolean().meta({
        description:
          "answered from the exact response cache (hi_cache / X-Hi-Cache or a key or workspace policy): no upstream called, billed 0",
      }),
    }),
  })
  .meta({ id: "Generation" });

export const livenessSchema = z.object({ status: z.literal("ok") }).meta({ id: "Liveness" });

export const readinessSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    /** Present (true) while the instance drains after SIGTERM/SIGINT. */
    draining: z.literal(true).optional(),
    checks: z.object({ redis: z.enum(["ok", "down"]), postgres: z.enum(["ok", "down"]) }),
  })
  .meta({ id: "Readiness" });
