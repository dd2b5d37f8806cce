import { z } from "zod";
import type { AdminService } from "../../admin/admin-service.js";
import { encodeKey, encodeKeyLimits, encodeWorkspace } from "../../admin/admin-wire.js";
import { parseExpiry } from "../../admin/parse-expiry.js";
import { convertMicroUsdToUsd } from "../../admin/parse-usd.js";
import type { ApiKeyStatus } from "../../auth/accounts.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { adminKeySchema, adminWorkspaceSchema } from "../openapi/openapi-admin-schemas.js";
import { commonErrorSchema } from "../openapi/openapi-schemas.js";
import { jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createAdminRouteFactory, readAdminBody, readPathId } from "./internal-admin-route.js";

const usdSchema = z.union([z.string(), z.number()]);
const actorField = z.string().optional().meta({ description: "Who made the change, for the audit log" });

const createWorkspaceBody = z.strictObject({
  name: z.string(),
  credits_usd: usdSchema.optional(),
  invoicing: z.boolean().optional(),
  allow_duplicate_name: z.boolean().optional(),
  actor: actorField,
});
const creditBody = z.strictObject({ usd: usdSchema, actor: actorField });
/** A response-cache policy on the wire (docs/response-cache.md); the admin service checks the range. */
const cacheTtlField = z.number().nullable().optional().meta({
  description:
    "Response-cache policy: seconds (1 to response_cache.max_ttl_seconds) deterministic requests are cached; null: none",
});
const updateWorkspaceBody = z.strictObject({
  invoicing: z.boolean().optional(),
  locked: z.boolean().optional(),
  response_cache_ttl_seconds: cacheTtlField,
  actor: actorField,
});
const createKeyBody = z.strictObject({
  workspace_id: z.string(),
  name: z.string().optional(),
  models: z.array(z.string()).nullable().optional(),
  expires_at: z.string().nullable().optional(),
  member_id: z.string().nullable().optional(),
  daily_limit_usd: usdSchema.optional(),
  monthly_limit_usd: usdSchema.optional(),
  total_limit_usd: usdSchema.optional(),
  requests_per_minute: z.number().optional(),
  response_cache_ttl_seconds: cacheTtlField,
  actor: actorField,
});
// null clears a limit (or the allowlist); an absent field is left as it is.
const updateKeyBody = z.strictObject({
  daily_limit_usd: usdSchema.nullable().optional(),
  monthly_limit_usd: usdSchema.nullable().optional(),
  total_limit_usd: usdSchema.nullable().optional(),
  requests_per_minute: z.number().nullable().optional(),
  models: z.array(z.string()).nullable().optional(),
  expires_at: z
    .string()
    .nullable()
    .optional()
    .meta({ description: "ISO-8601 date or date-time in the future; null: never expires" }),
  response_cache_ttl_seconds: cacheTtlField,
  // Budget alert thresholds (issue 30, another branch) are added here when they exist.
  actor: z.string().optional().meta({ description: "Who made the change, for the audit log" }),
});
const resetTotalBody = z.strictObject({ actor: z.string() });

const STATUS_BY_ACTION: Record<string, ApiKeyStatus> = {
  disable: "disabled",
  enable: "active",
  revoke: "revoked",
};
const ACTION_SUMMARIES: Record<string, string> = {
  disable: "Disable a key",
  enable: "Re-enable a disabled key",
  revoke: "Revoke a key (final)",
};

const idParams = z.object({ id: z.string() });
const workspaceAnswer = z.object({ workspace: adminWorkspaceSchema });
const keyAnswer = z.object({ key: adminKeySchema }).loose();
const ok = (schema: z.ZodType, status = 200) => ({
  [status]: jsonResponse(schema, status === 201 ? "Created" : "OK"),
  "4XX": jsonResponse(commonErrorSchema, "Error"),
});

export function createAdminRoutes(admin: AdminService, internalSecret: string): RouteDefinition[] {
  const route = createAdminRouteFactory(internalSecret);

  const statusRoutes = Object.entries(STATUS_BY_ACTION).map(([action, status]) =>
    // One route per action, so each is documented with its own summary.
    route(
      {
        method: "POST",
        path: `/keys/{id}/${action}`,
        summary: ACTION_SUMMARIES[action] ?? action,
        request: { params: idParams },
        responses: ok(z.object({ key: adminKeySchema })),
      },
      async (c) => {
        const key = await admin.setKeyStatus(readPathId(c), status);
        return c.json({ key: encodeKey(key) });
      },
    ),
  );

  return [
    route(
      {
        method: "POST",
        path: "/workspaces",
        summary: "Create a workspace (a taken name is refused unless allow_duplicate_name is true)",
        request: { body: createWorkspaceBody },
        responses: ok(workspaceAnswer, 201),
      },
      async (c) => {
        const body = await readAdminBody(c, createWorkspaceBody);
        const workspace = await admin.createWorkspace({
          name: body.name,
          creditsUsd: body.credits_usd,
          invoicing: body.invoicing,
          allowDuplicateName: body.allow_duplicate_name,
          actor: body.actor,
        });
        return c.json({ workspace: encodeWorkspace(workspace) }, 201);
      },
    ),
    route(
      {
        method: "GET",
        path: "/workspaces",
        summary: "List workspaces, oldest first (?name= exact name, ?limit= 1..10000, default 100)",
        request: {
          query: z.object({
            name: z.string().optional().meta({ description: "Only the workspace of this exact name" }),
            limit: z.int().min(1).max(10_000).optional().meta({ description: "default 100" }),
          }),
        },
        responses: ok(z.object({ data: z.array(adminWorkspaceSchema) })),
      },
      async (c) => {
        const limit = c.req.query("limit");
        const workspaces = await admin.listWorkspaces({
          name: c.req.query("name"),
          limit: limit === undefined ? undefined : readLimitQuery(limit),
        });
        return c.json({ data: workspaces.map(encodeWorkspace) });
      },
    ),
    route(
      {
        method: "GET",
        path: "/workspaces/{id}",
        summary: "Show a workspace",
        request: { params: idParams },
        responses: ok(workspaceAnswer),
      },
      async (c) => c.json({ workspace: encodeWorkspace(await admin.getWorkspace(readPathId(c))) }),
    ),
    route(
      {
        method: "POST",
        path: "/workspaces/{id}/credit",
        summary: "Add or remove credit",
        request: { params: idParams, body: creditBody },
        responses: ok(workspaceAnswer),
      },
      async (c) => {
        const body = await readAdminBody(c, creditBody);
        const workspace = await admin.creditWorkspace(readPathId(c), body.usd, body.actor);
        return c.json({ workspace: encodeWorkspace(workspace) });
      },
    ),
    route(
      {
        method: "PATCH",
        path: "/workspaces/{id}",
        summary: "Set invoicing / locked / response-cache policy",
        request: { params: idParams, body: updateWorkspaceBody },
        responses: ok(workspaceAnswer),
      },
      async (c) => {
        const body = await readAdminBody(c, updateWorkspaceBody);
        const workspace = await admin.updateWorkspace(readPathId(c), {
          invoicing: body.invoicing,
          locked: body.locked,
          responseCacheTtlSeconds: body.response_cache_ttl_seconds,
          actor: body.actor,
        });
        return c.json({ workspace: encodeWorkspace(workspace) });
      },
    ),
    route(
      {
        method: "POST",
        path: "/keys",
        summary: "Create a key (secret shown once)",
        request: { body: createKeyBody },
        responses: ok(keyAnswer, 201),
      },
      async (c) => {
        const body = await readAdminBody(c, createKeyBody);
        const { key, secret, limits } = await admin.createKey({
          workspaceId: body.workspace_id,
          name: body.name,
          models: body.models ?? undefined,
          expiresAt: body.expires_at == null ? undefined : parseExpiry(body.expires_at, "expires_at"),
          memberId: body.member_id ?? undefined,
          dailyLimitUsd: body.daily_limit_usd,
          monthlyLimitUsd: body.monthly_limit_usd,
          totalLimitUsd: body.total_limit_usd,
          requestsPerMinute: body.requests_per_minute,
          responseCacheTtlSeconds: body.response_cache_ttl_seconds,
          actor: body.actor,
        });
        return c.json(
          { key: encodeKey(key), secret, ...(limits ? { limits: encodeKeyLimits(limits) } : {}) },
          201,
        );
      },
    ),
    route(
      {
        method: "GET",
        path: "/keys",
        summary: "List a workspace's keys (?workspace_id=)",
        request: { query: z.object({ workspace_id: z.string() }) },
        responses: ok(z.object({ data: z.array(adminKeySchema) })),
      },
      async (c) => {
        const workspaceId = c.req.query("workspace_id");
        if (!workspaceId) throw GatewayError.invalidRequest("workspace_id is required", "workspace_id");
        const keys = await admin.listKeys(workspaceId);
        return c.json({ data: keys.map(encodeKey) });
      },
    ),
    route(
      {
        method: "GET",
        path: "/keys/{id}",
        summary: "Show a key with its limits and spend",
        request: { params: idParams },
        responses: ok(keyAnswer),
      },
      async (c) => {
        const { key, limits } = await admin.getKey(readPathId(c));
        return c.json({ key: encodeKey(key), limits: encodeKeyLimits(limits) });
      },
    ),
    route(
      {
        method: "PATCH",
        path: "/keys/{id}",
        summary: "Update limits, rate limit, allowlist, expiry, response-cache policy (audit-logged)",
        request: { params: idParams, body: updateKeyBody },
        responses: ok(keyAnswer),
      },
      async (c) => {
        const body = await readAdminBody(c, updateKeyBody);
        const { key, limits } = await admin.updateKey(readPathId(c), {
          dailyLimitUsd: body.daily_limit_usd,
          monthlyLimitUsd: body.monthly_limit_usd,
          totalLimitUsd: body.total_limit_usd,
          requestsPerMinute: body.requests_per_minute,
          models: body.models,
          expiresAt:
            body.expires_at === undefined || body.expires_at === null
              ? body.expires_at
              : parseExpiry(body.expires_at, "expires_at"),
          responseCacheTtlSeconds: body.response_cache_ttl_seconds,
          actor: body.actor,
        });
        return c.json({ key: encodeKey(key), limits: encodeKeyLimits(limits) });
      },
    ),
    route(
      {
        method: "POST",
        path: "/keys/{id}/reset-total",
        summary: "Reset total spend (audit-logged)",
        request: { params: idParams, body: resetTotalBody },
        responses: ok(keyAnswer),
      },
      async (c) => {
        const body = await readAdminBody(c, resetTotalBody);
        const reset = await admin.resetKeyTotal(readPathId(c), body.actor);
        return c.json({
          key: encodeKey(reset.key),
          limits: encodeKeyLimits(reset.limits),
          previous_total_spend_usd: convertMicroUsdToUsd(reset.previousSpendMicroUsd),
          previous_total_spend_micro_usd: String(reset.previousSpendMicroUsd),
          reset_at: reset.resetAt.toISOString(),
        });
      },
    ),
    ...statusRoutes,
  ];
}

function readLimitQuery(text: string): number {
  if (!/^\d+$/.test(text)) throw GatewayError.invalidRequest("limit must be a whole number", "limit");
  return Number(text);
}
