/**
 * `GET /api/v1/key`: the calling key's limits and where it stands against them (beyond the spec,
 * as OpenRouter's `GET /api/v1/key` and LiteLLM's `/key/info` offer). Spend comes from Postgres
 * (settled generations), in-flight reservations from the limit store; windows follow the limits'
 * clock. Money is a USD number for reading plus an exact micro-USD string.
 */
import { z } from "@hono/zod-openapi";
import { Hono } from "hono";
import { type Authenticator, readBearerToken } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/types.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import { computeLimitWindows } from "../../limits/limit-windows.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import type { SpendWindowName, Store } from "../../storage/types.js";
import type { AppEnv } from "../app-env.js";
import { createErrorResponse } from "../error-response.js";

const usdSchema = z.number().openapi({ description: "USD (display value)" });
const microSchema = z.string().openapi({ description: "Exact integer micro-USD, as a decimal string" });

const spendWindowSchema = z
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
      rate_limit: z.object({
        requests_per_minute: z.int().nullable().openapi({ description: "null: unlimited" }),
        source: z.enum(["key", "default", "none"]),
      }),
      limits: z.object({ daily: spendWindowSchema, monthly: spendWindowSchema, total: spendWindowSchema }),
      workspace: z.object({
        balance_usd: usdSchema,
        balance_micro_usd: microSchema,
        reserved_usd: usdSchema.nullable(),
        reserved_micro_usd: microSchema.nullable(),
        invoicing: z.boolean(),
      }),
    }),
  })
  .openapi("KeyInfo");

export interface KeyInfoRouteDeps {
  config: GatewayConfig;
  store: Store;
  authenticator: Authenticator;
  spendGuard: SpendGuard;
}

function renderMoney(microUsd: number | null) {
  return microUsd === null
    ? { usd: null, micro: null }
    : { usd: convertMicroUsdToUsd(microUsd), micro: String(microUsd) };
}

export function createKeyInfoRoute(deps: KeyInfoRouteDeps) {
  const app = new Hono<AppEnv>();
  app.get("/api/v1/key", async (c) => {
    const requestId = c.get("requestId");
    try {
      const { key } = await deps.authenticator.authenticate(readBearerToken(c.req.header("authorization")));
      const nowMs = await deps.spendGuard.now();
      const fresh = await deps.store.keyLimits.readAdmission(key.id);
      if (!fresh) throw new GatewayError("invalid_api_key", "Unknown API key");
      const { limits, workspace } = fresh;
      const windows = computeLimitWindows(nowMs, limits.totalResetAt);
      const [spent, reserved] = await Promise.all([
        deps.store.keyLimits.sumSpend(key.id, {
          daily: { since: new Date(windows.daily.startMs), until: new Date(windows.daily.endMs!) },
          monthly: { since: new Date(windows.monthly.startMs), until: new Date(windows.monthly.endMs!) },
          total: { since: new Date(windows.total.startMs), until: null },
        }),
        deps.spendGuard.readReserved(workspace.id, key.id),
      ]);

      const renderWindow = (name: SpendWindowName, limit: number | null) => {
        const spentMicro = spent[name] ?? 0;
        const remaining =
          limit === null ? null : Math.max(0, limit - spentMicro - (reserved?.keyMicroUsd ?? 0));
        const window = windows[name];
        const [limitMoney, spentMoney, reservedMoney, remainingMoney] = [
          renderMoney(limit),
          renderMoney(spentMicro),
          renderMoney(reserved?.keyMicroUsd ?? null),
          renderMoney(remaining),
        ];
        return {
          limit_usd: limitMoney.usd,
          limit_micro_usd: limitMoney.micro,
          spent_usd: spentMoney.usd!,
          spent_micro_usd: spentMoney.micro!,
          reserved_usd: reservedMoney.usd,
          reserved_micro_usd: reservedMoney.micro,
          remaining_usd: remainingMoney.usd,
          remaining_micro_usd: remainingMoney.micro,
          // A key never reset counts its total from its creation.
          window_start: new Date(
            name === "total" && limits.totalResetAt === null ? key.createdAt.getTime() : window.startMs,
          ).toISOString(),
          resets_at: window.endMs === null ? null : new Date(window.endMs).toISOString(),
        };
      };
      const rpm = limits.requestsPerMinute ?? deps.config.defaultRequestsPerMinute;
      const workspaceReserved = renderMoney(reserved?.workspaceMicroUsd ?? null);
      return c.json({
        data: {
          id: key.id,
          name: key.name,
          display: key.display,
          workspace_id: key.workspaceId,
          status: key.status,
          source: key.source,
          models: fresh.allowedModels,
          expires_at: key.expiresAt?.toISOString() ?? null,
          created_at: key.createdAt.toISOString(),
          rate_limit: {
            requests_per_minute: rpm,
            source: limits.requestsPerMinute !== null ? "key" : rpm !== null ? "default" : "none",
          },
          limits: {
            daily: renderWindow("daily", limits.dailyMicroUsd),
            monthly: renderWindow("monthly", limits.monthlyMicroUsd),
            total: renderWindow("total", limits.totalMicroUsd),
          },
          workspace: {
            balance_usd: convertMicroUsdToUsd(workspace.balanceMicroUsd),
            balance_micro_usd: String(workspace.balanceMicroUsd),
            reserved_usd: workspaceReserved.usd,
            reserved_micro_usd: workspaceReserved.micro,
            invoicing: workspace.invoicing,
          },
        },
      });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
    }
  });
  return app;
}
