/**
 * The admin API's answers (routes/admin-routes.ts, routes/admin-usage-routes.ts) as zod schemas,
 * for /openapi.json. Field-level docs: docs/admin-api.md.
 */
import { z } from "zod";
import { rateLimitSchema, spendWindowsSchema, workspaceSpendSchema } from "../routes/key-info-route.js";
import { generationSchema } from "./openapi-schemas.js";

export const adminWorkspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    balance_usd: z.number(),
    balance_micro_usd: z.string(),
    invoicing: z.boolean(),
    locked: z.boolean(),
    created_at: z.string(),
    response_cache_ttl_seconds: z.int().nullable().meta({
      description: "Response-cache policy of the keys without their own: seconds; null: none",
    }),
  })
  .meta({ id: "AdminWorkspace" });

export const adminKeySchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    display: z.string(),
    status: z.enum(["active", "disabled", "revoked"]),
    models: z.array(z.string()).nullable(),
    expires_at: z.string().nullable(),
    response_cache_ttl_seconds: z
      .int()
      .nullable()
      .meta({ description: "The key's own response-cache policy: seconds; null: its workspace's" }),
  })
  .loose()
  .meta({ id: "AdminKey" });

const microSchema = z.string().meta({ description: "Exact integer micro-USD, as a decimal string" });

export const adminKeySpendSchema = z
  .object({
    key: adminKeySchema,
    limits: z.object({}).loose().meta({ description: "The key's limits, as GET /internal/admin/keys/{id}" }),
    spend: spendWindowsSchema,
    rate_limit: rateLimitSchema,
    workspace: workspaceSpendSchema,
  })
  .meta({ id: "AdminKeySpend" });

export const adminDailyUsageSchema = z
  .object({
    workspace_id: z.string(),
    days: z.int(),
    since: z.string().meta({ description: "UTC midnight of the first day (inclusive)" }),
    until: z.string().meta({ description: "UTC midnight after today (exclusive)" }),
    data: z.array(
      z.object({
        day: z.string().meta({ description: "YYYY-MM-DD (UTC)" }),
        model: z.string(),
        requests: z.int(),
        tokens_prompt: z.int(),
        tokens_completion: z.int(),
        cost_usd: z.number(),
        cost_micro_usd: microSchema,
      }),
    ),
  })
  .meta({ id: "AdminDailyUsage" });

export const adminGenerationSchema = generationSchema.shape.data
  .extend({ workspace_id: z.string(), api_key_id: z.string() })
  .meta({ id: "AdminGeneration" });

export const adminModelPerformanceSchema = z
  .object({
    workspace_id: z.string(),
    days: z.int(),
    bucket: z.enum(["hour", "day"]),
    since: z.string(),
    until: z.string(),
    data: z.array(
      z.object({
        bucket: z.string().meta({ description: "The bucket's start, ISO-8601 UTC" }),
        model: z.string(),
        requests: z.int().meta({ description: "Finished requests (every status but in_progress)" }),
        errors: z.int().meta({ description: "Of those, status error or interrupted" }),
        error_rate: z.number().meta({ description: "errors / requests, 0..1" }),
        latency_p50_ms: z.int().nullable().meta({ description: "Of the ok requests; null when none" }),
        latency_p95_ms: z.int().nullable(),
        latency_mean_ms: z.int().nullable(),
      }),
    ),
  })
  .meta({ id: "AdminModelPerformance" });

const breakerStateSchema = z.enum(["closed", "open", "half-open"]);

export const adminRoutesSchema = z
  .object({
    instance_id: z.string().meta({ description: "The instance that answered" }),
    instances: z.array(
      z.object({
        instance_id: z.string(),
        reported_at: z.string().meta({ description: "When its breaker states were read (ISO-8601)" }),
      }),
    ),
    models: z.array(
      z.object({
        slug: z.string(),
        name: z.string(),
        routes: z.array(
          z.object({
            provider: z.string(),
            provider_kind: z.string(),
            upstream_model: z.string(),
            key_variable: z.string().nullable().meta({ description: "The provider's API key variable" }),
            key_set: z
              .boolean()
              .meta({ description: "false: the variable was unset at start (route skipped)" }),
            breakers: z.array(z.object({ instance_id: z.string(), state: breakerStateSchema })),
          }),
        ),
      }),
    ),
  })
  .meta({ id: "AdminRoutes" });
