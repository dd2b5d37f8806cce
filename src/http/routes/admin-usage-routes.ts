/**
 * Admin API reports (under `/internal/admin`, header `X-Internal-Token`): where a key stands
 * against its limits, a workspace's usage per day and model, and one request by id whatever its
 * workspace (its filtered request list is admin-activity-routes.ts). Read-only; the web console and operators' scripts read them. Wire
 * fields are snake_case, money a USD number plus an exact micro-USD string, errors the common
 * envelope.
 */
import { z } from "zod";
import {
  encodeKeySpendReport,
  type PendingSettlementsReader,
  readKeySpend,
} from "../../admin/read-key-spend.js";
import { readWorkspaceUsage, USAGE_DAYS } from "../../admin/read-workspace-usage.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import type { GenerationRecord } from "../../engine/generation-record.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import type { Store } from "../../storage/store.js";
import {
  adminDailyUsageSchema,
  adminGenerationSchema,
  adminKeySpendSchema,
} from "../openapi/openapi-admin-schemas.js";
import { COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { renderGeneration } from "./generation-lookup-route.js";
import { createAdminRouteFactory, readIntegerQuery, readPathId } from "./internal-admin-route.js";

export interface AdminUsageRoutesDeps {
  store: Store;
  spendGuard: Pick<SpendGuard, "now" | "readReserved">;
  internalSecret: string;
  defaultRequestsPerMinute: number | null;
  /** This instance's settlements under way: a key's report waits for its own. */
  settlements?: PendingSettlementsReader;
}

/** A request record as admins see it: the public lookup's fields plus whose it is. */
export function renderAdminGeneration(record: GenerationRecord) {
  return Object.assign(renderGeneration(record), {
    workspace_id: record.workspaceId,
    api_key_id: record.apiKeyId,
  });
}

const idParams = z.object({ id: z.string() });

export function createAdminUsageRoutes(deps: AdminUsageRoutesDeps): RouteDefinition[] {
  const route = createAdminRouteFactory(deps.internalSecret);

  const requireWorkspace = async (id: string) => {
    const workspace = await deps.store.workspaces.get(id);
    if (!workspace) throw createUnknownWorkspaceError(id, "id");
    return workspace;
  };

  const keySpend = route(
    {
      path: "/keys/{id}/spend",
      summary: "A key's spend per window, in-flight reservations, rate limit and workspace balance",
      request: { params: idParams },
      responses: { 200: jsonResponse(adminKeySpendSchema, "Where the key stands"), ...COMMON_ERRORS },
    },
    async (c) => {
      const id = readPathId(c);
      const key = await deps.store.apiKeys.get(id);
      const spend = key ? await readKeySpend(deps, key) : null;
      if (!key || !spend) throw GatewayError.invalidRequest(`Unknown API key "${id}"`, "id");
      return encodeKeySpendReport(key, spend);
    },
  );

  const usage = route(
    {
      path: "/workspaces/{id}/usage",
      summary: "A workspace's requests, tokens and cost per UTC day and model",
      request: {
        params: idParams,
        query: z.object({
          days: z
            .int()
            .min(1)
            .max(USAGE_DAYS.max)
            .optional()
            .meta({ description: `Whole UTC days up to today (default ${USAGE_DAYS.default})` }),
        }),
      },
      responses: {
        200: jsonResponse(adminDailyUsageSchema, "Usage rows, ordered by day then model"),
        ...COMMON_ERRORS,
      },
    },
    async (c) => {
      const workspace = await requireWorkspace(readPathId(c));
      const days = readIntegerQuery(c, "days", 1, USAGE_DAYS.max) ?? USAGE_DAYS.default;
      return readWorkspaceUsage(deps.store.reports, workspace.id, days);
    },
  );

  const generation = route(
    {
      path: "/generations/{id}",
      summary: "One request by its id (X-Request-Id), whatever its workspace",
      request: { params: idParams },
      responses: {
        200: jsonResponse(z.object({ generation: adminGenerationSchema }), "The request"),
        ...COMMON_ERRORS,
      },
    },
    async (c) => {
      const id = readPathId(c);
      const record = await deps.store.reports.findGeneration(id);
      if (!record) throw GatewayError.invalidRequest(`No generation with id "${id}"`, "id");
      return { generation: renderAdminGeneration(record) };
    },
  );

  return [keySpend, usage, generation];
}
