/**
 * `GET /api/v1/key`: the calling key's limits and where it stands against them (beyond the spec,
 * as OpenRouter's `GET /api/v1/key` and LiteLLM's `/key/info` offer). Spend comes from Postgres
 * (settled generations), in-flight reservations from the limit store; windows follow the limits'
 * clock. Money is a USD number for reading plus an exact micro-USD string.
 */
import { z } from "zod";
import { type PendingSettlementsReader, readKeySpend } from "../../admin/read-key-spend.js";
import type { ApiKeyRecord, Workspace } from "../../auth/accounts.js";
import { type Authenticator, readBearerToken } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import type { Store } from "../../storage/store.js";
import { BEARER, COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import { classifyCaught, createErrorResponse } from "../router/error-response.js";
import type { RouteDefinition } from "../router/route-definition.js";

const usdSchema = z.number().meta({ description: "USD (display value)" });
const microSchema = z.string().meta({ description: "Exact integer micro-USD, as a decimal string" });

export const spendWindowSchema = z
  .object({
    limit_usd: usdSchema.nullable(),
    limit_micro_usd: microSchema.nullable(),
    spent_usd: usdSchema,
    spent_micro_usd: microSchema,
    reserved_usd: usdSchema.nullable().meta({ description: "Held by requests in flight; null if unknown" }),
    reserved_micro_usd: microSchema.nullable(),
    remaining_usd: usdSchema
      .nullable()
      .meta({ description: "limit − spent − reserved (≥ 0); null: no limit" }),
    remaining_micro_usd: microSchema.nullable(),
    window_start: z.string().meta({ description: "ISO-8601, UTC" }),
    resets_at: z.string().nullable().meta({ description: "null: the total window never resets by itself" }),
  })
  .meta({ id: "KeySpendWindow" });

/** The parts of a spend report (admin/read-key-spend.ts), shared with the admin API's key spend. */
export const rateLimitSchema = z.object({
  requests_per_minute: z.int().nullable().meta({ description: "null: unlimited" }),
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

/** The response-cache policy that applies to the key's requests (docs/response-cache.md). */
export const responseCachePolicySchema = z
  .object({
    ttl_seconds: z
      .int()
      .nullable()
      .meta({
        description:
          "Seconds deterministic requests (temperature 0, no server tools) are cached for, capped by " +
          "response_cache.max_ttl_seconds; null: only requests that ask (hi_cache / X-Hi-Cache) are cached",
      }),
    source: z.enum(["key", "workspace", "none"]).meta({ description: "Whose policy it is" }),
  })
  .meta({ id: "KeyResponseCachePolicy" });

const crossedSchema = z.array(
  z.object({ threshold_percent: z.int(), crossed_at: z.string().meta({ description: "ISO-8601, UTC" }) }),
);
export const keyAlertsSchema = z
  .object({
    thresholds: z
      .array(z.int())
      .meta({ description: "Percent of each spend limit that alerts: the key's own, else its workspace's" }),
    source: z.enum(["key", "workspace", "none"]),
    webhook: z
      .boolean()
      .meta({ description: "Whether the workspace has a webhook; without one nothing is sent" }),
    crossed: z
      .object({ daily: crossedSchema, monthly: crossedSchema, total: crossedSchema })
      .meta({ description: "Thresholds crossed in each current window, in the order they were crossed" }),
  })
  .meta({ id: "KeyAlerts" });

export const keyInfoSchema = z
  .object({
    data: z.object({
      id: z.string(),
      name: z.string(),
      display: z.string(),
      workspace_id: z.string(),
      status: z.string(),
      source: z.string(),
      models: z.array(z.string()).nullable().meta({ description: "Allowlist; null: every model" }),
      expires_at: z.string().nullable(),
      created_at: z.string(),
      rate_limit: rateLimitSchema,
      limits: spendWindowsSchema,
      workspace: workspaceSpendSchema,
      alerts: keyAlertsSchema,
      response_cache: responseCachePolicySchema,
    }),
  })
  .meta({ id: "KeyInfo" });

export interface KeyInfoRouteDeps {
  config: GatewayConfig;
  store: Store;
  authenticator: Authenticator;
  spendGuard: SpendGuard;
  engine: PendingSettlementsReader;
}

export function createKeyInfoRoute(deps: KeyInfoRouteDeps): RouteDefinition {
  return {
    method: "GET",
    path: "/api/v1/key",
    summary:
      "The calling key: limits, spend per window, remaining headroom, rate limit, allowlist, expiry, budget alerts, response-cache policy",
    security: BEARER,
    responses: { 200: jsonResponse(keyInfoSchema, "The calling key"), ...COMMON_ERRORS },
    handler: async (c) => {
      const requestId = c.requestId;
      try {
        // The authenticated state is the one the engine reads its cache policy from.
        const { key, workspace } = await deps.authenticator.authenticate(
          readBearerToken(c.req.header("authorization")),
        );
        const spend = await readKeySpend(
          {
            store: deps.store,
            spendGuard: deps.spendGuard,
            defaultRequestsPerMinute: deps.config.defaultRequestsPerMinute,
            alerts: deps.store.alerts,
            settlements: deps.engine,
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
            response_cache: describeCachePolicy(key, workspace, deps.config.responseCache.maxTtlSeconds),
          },
        });
      } catch (thrown) {
        const error = classifyCaught(thrown, requestId, c.logger);
        return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
      }
    },
  };
}

/** The key's own policy, else its workspace's, as the engine applies it (capped by the config). */
function describeCachePolicy(
  key: ApiKeyRecord,
  workspace: Workspace,
  maxTtlSeconds: number,
): z.infer<typeof responseCachePolicySchema> {
  const own = key.responseCacheTtlSeconds ?? null;
  const inherited = workspace.responseCacheTtlSeconds ?? null;
  const ttl = own ?? inherited;
  return {
    ttl_seconds: ttl === null ? null : Math.min(ttl, maxTtlSeconds),
    source: own !== null ? "key" : inherited !== null ? "workspace" : "none",
  };
}
