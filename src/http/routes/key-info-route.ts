/**
 * `GET /api/v1/key`: the calling key's limits and where it stands against them (beyond the spec,
 * as OpenRouter's `GET /api/v1/key` and LiteLLM's `/key/info` offer). Spend comes from Postgres
 * (settled generations), in-flight reservations from the limit store; windows follow the limits'
 * clock. Money is a USD number for reading plus an exact micro-USD string.
 */
import { z } from "@hono/zod-openapi";
import { Hono } from "hono";
import { readKeySpend } from "../../admin/read-key-spend.js";
import { type Authenticator, readBearerToken } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/types.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import type { Store } from "../../storage/store.js";
import type { AppEnv } from "../app-env.js";
import { createErrorResponse } from "../error-response.js";

const usdSchema = z.number().openapi({ description: "USD (display value)" });
const microSchema = z.string().openapi({ description: "Exact integer micro-USD, as a decimal string" });

export const spendWindowSchema = z
  .object({
    limit_usd: usdSchema.nullable(),
    limit_micro_usd: microSchema.nullable(),
    spent_usd: usdSchema,
    spent_micro_usd: microSchema,
    reserved_usd: usdSchema
      .nullable()
      .openapi({ description: "Held by requests in flight; null if unknown" }),
    reserved_micro_usd: microSchema.nullable(),
    remaining_usd: usdSchema
      .nullable()
      .openapi({ description: "limit − spent − reserved (≥ 0); null: no limit" }),
    remaining_micro_usd: microSchema.nullable(),
    window_start: z.string().openapi({ description: "ISO-8601, UTC" }),
    resets_at: z
      .string()
      .nullable()
      .openapi({ description: "null: the total window never resets by itself" }),
  })
  .openapi("KeySpendWindow");

/** The parts of a spend report (admin/read-key-spend.ts), shared with the admin API's key spend. */
export const rateLimitSchema = z.object({
  requests_per_minute: z.int().nullable().openapi({ description: "null: unlimited" }),
  source: z.enum(["key", "default", "none"]),
});
export const spendWindowsSchema = z.object({
  daily: spendWindowSchema,
  monthly: spendWindowSchema,
  total: spendWindowSchema,
});
export const workspaceSpendSchema = z.object({
  balance_usd: usdSchema,
  balance_micro_usd: microSchema,
  reserved_usd: usdSchema.nullable(),
  reserved_micro_usd: microSchema.nullable(),
  invoicing: z.boolean(),
});

export const keyInfoSchema = z
  .object({
    data: z.object({
      id: z.string(),
      name: z.string(),
      display: z.string(),
      workspace_id: z.string(),
      status: z.string(),
      source: z.string(),
      models: z.array(z.string()).nullable().openapi({ description: "Allowlist; null: every model" }),
      expires_at: z.string().nullable(),
      created_at: z.string(),
      rate_limit: rateLimitSchema,
      limits: spendWindowsSchema,
      workspace: workspaceSpendSchema,
    }),
  })
  .openapi("KeyInfo");

export interface KeyInfoRouteDeps {
  config: GatewayConfig;
  store: Store;
  authenticator: Authenticator;
  spendGuard: SpendGuard;
}

export function createKeyInfoRoute(deps: KeyInfoRouteDeps) {
  const app = new Hono<AppEnv>();
  app.get("/api/v1/key", async (c) => {
    const requestId = c.get("requestId");
    try {
      const { key } = await deps.authenticator.authenticate(readBearerToken(c.req.header("authorization")));
      const spend = await readKeySpend(
        {
          store: deps.store,
          spendGuard: deps.spendGuard,
          defaultRequestsPerMinute: deps.config.defaultRequestsPerMinute,
        },
        key,
      );
      if (!spend) throw new GatewayError("invalid_api_key", "Unknown API key");
      return c.json({
        data: {
          id: key.id,
          name: key.name,
          display: key.display,
          workspace_id: key.workspaceId,
          status: key.status,
          source: key.source,
          models: spend.allowedModels,
          expires_at: key.expiresAt?.toISOString() ?? null,
          created_at: key.createdAt.toISOString(),
          ...spend.report,
        },
      });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
    }
  });
  return app;
}
