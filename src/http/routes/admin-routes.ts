/**
 * Admin API (mounted at `/internal/admin`): workspaces, credit and keys. Callers present the
 * internal secret in `X-Internal-Token`; everything else is the admin service's job. Wire fields
 * are snake_case; errors use the common envelope.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AdminService } from "../../admin/admin-service.js";
import { encodeKey, encodeKeyLimits, encodeWorkspace } from "../../admin/admin-wire.js";
import { parseExpiry } from "../../admin/parse-expiry.js";
import { convertMicroUsdToUsd } from "../../admin/parse-usd.js";
import type { ApiKeyStatus } from "../../auth/accounts.js";
import { createCommonErrorEnvelope, createErrorHeaders } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import { formatParam } from "../../ingress/shared/describe-validation-issue.js";
import { readJsonBody } from "../read-json-body.js";

const MAX_ADMIN_BODY_BYTES = 64 * 1024;
const usdSchema = z.union([z.string(), z.number()]);

const createWorkspaceBody = z.strictObject({
  name: z.string(),
  credits_usd: usdSchema.optional(),
  invoicing: z.boolean().optional(),
  allow_duplicate_name: z.boolean().optional(),
});
const creditBody = z.strictObject({ usd: usdSchema });
const updateWorkspaceBody = z.strictObject({
  invoicing: z.boolean().optional(),
  locked: z.boolean().optional(),
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
});
// null clears a limit (or the allowlist); an absent field is left as it is.
const updateKeyBody = z.strictObject({
  daily_limit_usd: usdSchema.nullable().optional(),
  monthly_limit_usd: usdSchema.nullable().optional(),
  total_limit_usd: usdSchema.nullable().optional(),
  requests_per_minute: z.number().nullable().optional(),
  models: z.array(z.string()).nullable().optional(),
  actor: z.string().optional(),
});
const resetTotalBody = z.strictObject({ actor: z.string() });

const STATUS_BY_ACTION: Record<string, ApiKeyStatus> = {
  disable: "disabled",
  enable: "active",
  revoke: "revoked",
};

export function createAdminRoutes(admin: AdminService, internalSecret: string): Hono {
  const app = new Hono();

  app.onError((error) => renderError(toGatewayError(error)));
  app.notFound((c) =>
    renderError(GatewayError.invalidRequest(`No admin route ${c.req.method} ${c.req.path}`), 404),
  );

  app.use("*", async (c, next) => {
    const token = c.req.header("x-internal-token");
    if (!internalSecret || token === undefined || !isSameSecret(token, internalSecret)) {
      return renderError(new GatewayError("invalid_api_key", "Missing or wrong X-Internal-Token"));
    }
    await next();
  });

  app.post("/workspaces", async (c) => {
    const body = await readBody(c, createWorkspaceBody);
    const workspace = await admin.createWorkspace({
      name: body.name,
      creditsUsd: body.credits_usd,
      invoicing: body.invoicing,
      allowDuplicateName: body.allow_duplicate_name,
    });
    return c.json({ workspace: encodeWorkspace(workspace) }, 201);
  });

  app.get("/workspaces", async (c) => {
    const limit = c.req.query("limit");
    const workspaces = await admin.listWorkspaces({
      name: c.req.query("name"),
      limit: limit === undefined ? undefined : readLimitQuery(limit),
    });
    return c.json({ data: workspaces.map(encodeWorkspace) });
  });

  app.get("/workspaces/:id", async (c) => {
    return c.json({ workspace: encodeWorkspace(await admin.getWorkspace(c.req.param("id"))) });
  });

  app.post("/workspaces/:id/credit", async (c) => {
    const body = await readBody(c, creditBody);
    const workspace = await admin.creditWorkspace(c.req.param("id"), body.usd);
    return c.json({ workspace: encodeWorkspace(workspace) });
  });

  app.patch("/workspaces/:id", async (c) => {
    const body = await readBody(c, updateWorkspaceBody);
    const workspace = await admin.updateWorkspace(c.req.param("id"), body);
    return c.json({ workspace: encodeWorkspace(workspace) });
  });

  app.post("/keys", async (c) => {
    const body = await readBody(c, createKeyBody);
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
    });
    return c.json(
      { key: encodeKey(key), secret, ...(limits ? { limits: encodeKeyLimits(limits) } : {}) },
      201,
    );
  });

  app.get("/keys/:id", async (c) => {
    const { key, limits } = await admin.getKey(c.req.param("id"));
    return c.json({ key: encodeKey(key), limits: encodeKeyLimits(limits) });
  });

  app.patch("/keys/:id", async (c) => {
    const body = await readBody(c, updateKeyBody);
    const { key, limits } = await admin.updateKey(c.req.param("id"), {
      dailyLimitUsd: body.daily_limit_usd,
      monthlyLimitUsd: body.monthly_limit_usd,
      totalLimitUsd: body.total_limit_usd,
      requestsPerMinute: body.requests_per_minute,
      models: body.models,
      actor: body.actor,
    });
    return c.json({ key: encodeKey(key), limits: encodeKeyLimits(limits) });
  });

  app.post("/keys/:id/reset-total", async (c) => {
    const body = await readBody(c, resetTotalBody);
    const reset = await admin.resetKeyTotal(c.req.param("id"), body.actor);
    return c.json({
      key: encodeKey(reset.key),
      limits: encodeKeyLimits(reset.limits),
      previous_total_spend_usd: convertMicroUsdToUsd(reset.previousSpendMicroUsd),
      previous_total_spend_micro_usd: String(reset.previousSpendMicroUsd),
      reset_at: reset.resetAt.toISOString(),
    });
  });

  // One static route per action rather than `:action{disable|enable|revoke}`: that pattern beside
  // `/keys/:id/reset-total` is beyond Hono's RegExpRouter, which pushed the whole app (generation
  // routes included) onto the slower TrieRouter.
  for (const [action, status] of Object.entries(STATUS_BY_ACTION)) {
    app.post(`/keys/:id/${action}`, async (c) => {
      const key = await admin.setKeyStatus(c.req.param("id"), status);
      return c.json({ key: encodeKey(key) });
    });
  }

  app.get("/keys", async (c) => {
    const workspaceId = c.req.query("workspace_id");
    if (!workspaceId) throw GatewayError.invalidRequest("workspace_id is required", "workspace_id");
    const keys = await admin.listKeys(workspaceId);
    return c.json({ data: keys.map(encodeKey) });
  });

  return app;
}

function readLimitQuery(text: string): number {
  if (!/^\d+$/.test(text)) throw GatewayError.invalidRequest("limit must be a whole number", "limit");
  return Number(text);
}

/** Hashing first gives timingSafeEqual equal lengths and hides the secret's length. */
function isSameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}

async function readBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await readJsonBody(c.req.raw, MAX_ADMIN_BODY_BYTES));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // An unknown field is reported at the object that holds it; name the field itself.
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]] : issue.path;
  const param = formatParam(path);
  const message = issue.code === "unrecognized_keys" ? "unknown field" : issue.message;
  throw GatewayError.invalidRequest(param ? `${param}: ${message}` : message, param);
}

function renderError(error: GatewayError, status: number = error.status): Response {
  return new Response(JSON.stringify(createCommonErrorEnvelope(error)), {
    status,
    headers: { "Content-Type": "application/json", ...createErrorHeaders(error) },
  });
}
