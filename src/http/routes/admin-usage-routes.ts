/**
 * Admin API reports (mounted at `/internal/admin`, header `X-Internal-Token`): where a key stands
 * against its limits, a workspace's usage per day and model, its latest requests, and one request
 * by id whatever its workspace. Read-only; the web console and operators' scripts read them. Wire
 * fields are snake_case, money a USD number plus an exact micro-USD string, errors the common
 * envelope.
 */
import { type Context, Hono } from "hono";
import { encodeKey, encodeKeyLimits } from "../../admin/admin-wire.js";
import { readKeySpend } from "../../admin/read-key-spend.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import { isInternalTokenValid } from "../../auth/internal-token.js";
import type { GenerationRecord } from "../../engine/generation-record.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import type { Store } from "../../storage/store.js";
import type { AppEnv } from "../app-env.js";
import { createErrorResponse } from "../error-response.js";
import { renderGeneration } from "./generation-lookup-route.js";

export const USAGE_DAYS = { default: 30, max: 90 } as const;
export const GENERATION_LIST_LIMIT = { default: 50, max: 200 } as const;
const DAY_MS = 86_400_000;

export interface AdminUsageRoutesDeps {
  store: Store;
  spendGuard: Pick<SpendGuard, "now" | "readReserved">;
  internalSecret: string;
  defaultRequestsPerMinute: number | null;
}

/** A request record as admins see it: the public lookup's fields plus whose it is. */
export function renderAdminGeneration(record: GenerationRecord) {
  return { ...renderGeneration(record), workspace_id: record.workspaceId, api_key_id: record.apiKeyId };
}

export function createAdminUsageRoutes(deps: AdminUsageRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const route = (path: string, answer: (c: Context<AppEnv>) => Promise<unknown>) =>
    app.get(path, async (c) => {
      const requestId = c.get("requestId");
      try {
        if (!isInternalTokenValid(c.req.header("x-internal-token"), deps.internalSecret)) {
          throw new GatewayError("invalid_api_key", "Missing or wrong X-Internal-Token");
        }
        return c.json(await answer(c));
      } catch (thrown) {
        const error = toGatewayError(thrown);
        return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
      }
    });

  const requireWorkspace = async (id: string) => {
    const workspace = await deps.store.workspaces.get(id);
    if (!workspace) throw createUnknownWorkspaceError(id, "id");
    return workspace;
  };

  route("/keys/:id/spend", async (c) => {
    const id = readPathId(c);
    const key = await deps.store.apiKeys.get(id);
    const spend = key ? await readKeySpend(deps, key) : null;
    if (!key || !spend) throw GatewayError.invalidRequest(`Unknown API key "${id}"`, "id");
    const { limits: windows, ...rest } = spend.report;
    return { key: encodeKey(key), limits: encodeKeyLimits(spend.limits), spend: windows, ...rest };
  });

  route("/workspaces/:id/usage", async (c) => {
    const workspace = await requireWorkspace(readPathId(c));
    const days = readIntegerQuery(c, "days", 1, USAGE_DAYS.max) ?? USAGE_DAYS.default;
    // Whole UTC days, today included.
    const now = new Date();
    const until = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const since = until - days * DAY_MS;
    const usage = await deps.store.reports.sumDailyUsage({
      workspaceId: workspace.id,
      since: new Date(since),
      until: new Date(until),
    });
    return {
      workspace_id: workspace.id,
      days,
      since: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
      data: usage.map((row) => ({
        day: row.day,
        model: row.model,
        requests: row.requests,
        tokens_prompt: row.tokensPrompt,
        tokens_completion: row.tokensCompletion,
        cost_usd: convertMicroUsdToUsd(row.costMicroUsd),
        cost_micro_usd: String(row.costMicroUsd),
      })),
    };
  });

  route("/workspaces/:id/generations", async (c) => {
    const workspace = await requireWorkspace(readPathId(c));
    const limit = readIntegerQuery(c, "limit", 1, GENERATION_LIST_LIMIT.max) ?? GENERATION_LIST_LIMIT.default;
    const keyId = c.req.query("key_id") || undefined;
    const records = await deps.store.reports.listGenerations({
      workspaceId: workspace.id,
      apiKeyId: keyId,
      limit,
    });
    return { data: records.map(renderAdminGeneration) };
  });

  route("/generations/:id", async (c) => {
    const id = readPathId(c);
    const record = await deps.store.reports.findGeneration(id);
    if (!record) throw GatewayError.invalidRequest(`No generation with id "${id}"`, "id");
    return { generation: renderAdminGeneration(record) };
  });

  return app;
}

/** An optional integer query parameter within [min, max]; anything else is a clear 400. */
function readIntegerQuery(c: Context, name: string, min: number, max: number): number | undefined {
  const text = c.req.query(name);
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw GatewayError.invalidRequest(`${name} must be an integer from ${min} to ${max}`, name);
  }
  return value;
}

/** The `:id` of every route here (Hono types a parameter of a path given as a string as optional). */
function readPathId(c: Context): string {
  return c.req.param("id") ?? "";
}
