/**
 * The admin API's reports (routes/admin-usage-routes.ts) in /openapi.json: key spend, a
 * workspace's usage per day and model, its latest requests, one request by id.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { keySchema } from "./openapi-admin-paths.js";
import { commonErrorSchema, generationSchema } from "./openapi-schemas.js";
import { GENERATION_LIST_LIMIT, USAGE_DAYS } from "./routes/admin-usage-routes.js";
import { rateLimitSchema, spendWindowsSchema, workspaceSpendSchema } from "./routes/key-info-route.js";

type Registry = OpenAPIHono["openAPIRegistry"];

const microSchema = z.string().openapi({ description: "Exact integer micro-USD, as a decimal string" });

export const adminKeySpendSchema = z
  .object({
    key: keySchema,
    limits: z
      .object({})
      .loose()
      .openapi({ description: "The key's limits, as GET /internal/admin/keys/{id}" }),
    spend: spendWindowsSchema,
    rate_limit: rateLimitSchema,
    workspace: workspaceSpendSchema,
  })
  .openapi("AdminKeySpend");

export const adminDailyUsageSchema = z
  .object({
    workspace_id: z.string(),
    days: z.int(),
    since: z.string().openapi({ description: "UTC midnight of the first day (inclusive)" }),
    until: z.string().openapi({ description: "UTC midnight after today (exclusive)" }),
    data: z.array(
      z.object({
        day: z.string().openapi({ description: "YYYY-MM-DD (UTC)" }),
        model: z.string(),
        requests: z.int(),
        tokens_prompt: z.int(),
        tokens_completion: z.int(),
        cost_usd: z.number(),
        cost_micro_usd: microSchema,
      }),
    ),
  })
  .openapi("AdminDailyUsage");

export const adminGenerationSchema = generationSchema.shape.data
  .extend({ workspace_id: z.string(), api_key_id: z.string() })
  .openapi("AdminGeneration");

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const idParams = z.object({ id: z.string() });
const errors = { "4XX": json(commonErrorSchema, "Error in the common envelope") };
const common = { tags: ["internal"], security: [{ internalToken: [] }] };

export function registerAdminUsagePaths(registry: Registry): void {
  registry.registerPath({
    ...common,
    method: "get",
    path: "/internal/admin/keys/{id}/spend",
    summary: "A key's spend per window, in-flight reservations, rate limit and workspace balance",
    request: { params: idParams },
    responses: { 200: json(adminKeySpendSchema, "Where the key stands"), ...errors },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/internal/admin/workspaces/{id}/usage",
    summary: "A workspace's requests, tokens and cost per UTC day and model",
    request: {
      params: idParams,
      query: z.object({
        days: z
          .int()
          .min(1)
          .max(USAGE_DAYS.max)
          .optional()
          .openapi({ description: `Whole UTC days up to today (default ${USAGE_DAYS.default})` }),
      }),
    },
    responses: { 200: json(adminDailyUsageSchema, "Usage rows, ordered by day then model"), ...errors },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/internal/admin/workspaces/{id}/generations",
    summary: "A workspace's latest requests (newest first)",
    request: {
      params: idParams,
      query: z.object({
        limit: z
          .int()
          .min(1)
          .max(GENERATION_LIST_LIMIT.max)
          .optional()
          .openapi({ description: `default ${GENERATION_LIST_LIMIT.default}` }),
        key_id: z.string().optional().openapi({ description: "Only this key's requests" }),
      }),
    },
    responses: { 200: json(z.object({ data: z.array(adminGenerationSchema) }), "Requests"), ...errors },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/internal/admin/generations/{id}",
    summary: "One request by its id (X-Request-Id), whatever its workspace",
    request: { params: idParams },
    responses: { 200: json(z.object({ generation: adminGenerationSchema }), "The request"), ...errors },
  });
}
