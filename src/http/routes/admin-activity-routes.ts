/**
 * The admin API's activity log (under `/internal/admin`, header `X-Internal-Token`): a workspace's
 * requests filtered by key, session, model, status, error code and time, a page at a time with a
 * cursor (keyset paging, as fast on the thousandth page as on the first); the same rows as a CSV
 * download streamed a page at a time (memory bounded by one page whatever the row count); and
 * latency and error rate per model per hour or day. Read-only.
 */

import type { ServerResponse } from "node:http";
import { z } from "zod";
import { GENERATION_LIST_LIMIT } from "../../admin/admin-wire.js";
import type { GenerationCursor } from "../../admin/ports.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Store } from "../../storage/store.js";
import { adminGenerationSchema, adminModelPerformanceSchema } from "../openapi/openapi-admin-schemas.js";
import { COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import { DEFAULT_CLIENT_READ_TIMEOUT_MS } from "../router/client-read-watch.js";
import type { RouteContext } from "../router/route-context.js";
import { ANSWERED, type RouteDefinition } from "../router/route-definition.js";
import { renderAdminGeneration } from "./admin-usage-routes.js";
import { formatCsvHeader, formatCsvRow } from "./generation-csv.js";
import {
  encodeCursor,
  GENERATION_STATUSES,
  readCursor,
  readGenerationFilter,
} from "./generation-filter-query.js";
import { createAdminRouteFactory, readIntegerQuery } from "./internal-admin-route.js";

export const PERFORMANCE_DAYS = { default: 7, max: 90, maxHourly: 7 } as const;
/** Rows per database read of the CSV export: what it holds in memory at once. */
export const CSV_PAGE_ROWS = 500;
const DAY_MS = 86_400_000;

export interface AdminActivityRoutesDeps {
  store: Store;
  internalSecret: string;
}

const idParams = z.object({ id: z.string() });
const filterQuery = {
  key_id: z.string().optional().meta({ description: "Only this key's requests" }),
  session_id: z
    .string()
    .optional()
    .meta({ description: "Only this client session's requests (the record's `session_id`)" }),
  model: z.string().optional().meta({ description: "Only requests for this catalog model" }),
  status: z.enum(GENERATION_STATUSES).optional(),
  error_code: z.string().optional().meta({ description: "Only requests that failed with this code" }),
  since: z.string().optional().meta({ description: "Admitted at or after (ISO-8601 with zone)" }),
  until: z.string().optional().meta({ description: "Admitted before (ISO-8601 with zone)" }),
};

export function createAdminActivityRoutes(deps: AdminActivityRoutesDeps): RouteDefinition[] {
  const route = createAdminRouteFactory(deps.internalSecret);

  const requireWorkspace = async (c: RouteContext) => {
    const id = c.req.param("id") ?? "";
    const workspace = await deps.store.workspaces.get(id);
    if (!workspace) throw createUnknownWorkspaceError(id, "id");
    return workspace;
  };

  const generations = route(
    {
      path: "/workspaces/{id}/generations",
      summary: "A workspace's requests, newest first, filtered and paged (?cursor= from next_cursor)",
      request: {
        params: idParams,
        query: z.object(filterQuery).extend({
          limit: z
            .int()
            .min(1)
            .max(GENERATION_LIST_LIMIT.max)
            .optional()
            .meta({ description: `default ${GENERATION_LIST_LIMIT.default}` }),
          cursor: z.string().optional().meta({ description: "The previous page's next_cursor" }),
        }),
      },
      responses: {
        200: jsonResponse(
          z.object({ data: z.array(adminGenerationSchema), next_cursor: z.string().nullable() }),
          "One page of requests; next_cursor is null on the last",
        ),
        ...COMMON_ERRORS,
      },
    },
    async (c) => {
      const workspace = await requireWorkspace(c);
      const filter = readGenerationFilter(c, workspace.id);
      const limit =
        readIntegerQuery(c, "limit", 1, GENERATION_LIST_LIMIT.max) ?? GENERATION_LIST_LIMIT.default;
      const page = await deps.store.reports.pageGenerations(filter, { after: readCursor(c), limit });
      return {
        data: page.records.map(renderAdminGeneration),
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      };
    },
  );

  const csv = route(
    {
      path: "/workspaces/{id}/generations.csv",
      summary: "The same filtered requests as CSV (every row, newest first, streamed)",
      description:
        "RFC 4180 with a header row; text cells a spreadsheet would read as a formula start with `'`.",
      request: { params: idParams, query: z.object(filterQuery) },
      responses: {
        200: { description: "CSV, one row per request", mediaType: "text/csv" },
        ...COMMON_ERRORS,
      },
    },
    async (c) => {
      const workspace = await requireWorkspace(c);
      const filter = readGenerationFilter(c, workspace.id);
      // The first page before the head: a failing database is still a JSON error.
      let page = await deps.store.reports.pageGenerations(filter, { limit: CSV_PAGE_ROWS });
      const { outgoing } = c;
      outgoing.writeHead(200, {
        "Content-Type": "text/csv; charset=utf-8",
        "Content-Disposition": `attachment; filename="requests-${workspace.id.replace(/[^A-Za-z0-9_-]/g, "")}.csv"`,
        "Cache-Control": "no-store",
        "X-Request-Id": c.requestId,
      });
      await write(outgoing, formatCsvHeader());
      for (;;) {
        if (outgoing.destroyed) return ANSWERED;
        await write(outgoing, page.records.map(formatCsvRow).join(""));
        if (page.next === null) break;
        const after: GenerationCursor = page.next;
        page = await deps.store.reports.pageGenerations(filter, { after, limit: CSV_PAGE_ROWS });
      }
      outgoing.end();
      return ANSWERED;
    },
  );

  const performance = route(
    {
      path: "/workspaces/{id}/performance",
      summary: "Latency (p50, p95, mean) and error rate per model per hour or UTC day",
      request: {
        params: idParams,
        query: z.object({
          days: z
            .int()
            .min(1)
            .max(PERFORMANCE_DAYS.max)
            .optional()
            .meta({ description: `Whole UTC days up to today (default ${PERFORMANCE_DAYS.default})` }),
          bucket: z
            .enum(["hour", "day"])
            .optional()
            .meta({ description: `default day; hour for at most ${PERFORMANCE_DAYS.maxHourly} days` }),
        }),
      },
      responses: {
        200: jsonResponse(adminModelPerformanceSchema, "Rows ordered by bucket then model"),
        ...COMMON_ERRORS,
      },
    },
    async (c) => {
      const workspace = await requireWorkspace(c);
      const days = readIntegerQuery(c, "days", 1, PERFORMANCE_DAYS.max) ?? PERFORMANCE_DAYS.default;
      const bucket = c.req.query("bucket") || "day";
      if (bucket !== "hour" && bucket !== "day") {
        throw GatewayError.invalidRequest("bucket must be hour or day", "bucket");
      }
      if (bucket === "hour" && days > PERFORMANCE_DAYS.maxHourly) {
        throw GatewayError.invalidRequest(
          `bucket=hour covers at most ${PERFORMANCE_DAYS.maxHourly} days`,
          "bucket",
        );
      }
      const now = new Date();
      const until = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      const since = until - days * DAY_MS;
      const rows = await deps.store.reports.summarizePerformance({
        workspaceId: workspace.id,
        since: new Date(since),
        until: new Date(until),
        bucketSeconds: bucket === "hour" ? 3600 : 86_400,
      });
      return {
        workspace_id: workspace.id,
        days,
        bucket,
        since: new Date(since).toISOString(),
        until: new Date(until).toISOString(),
        data: rows.map((row) => ({
          bucket: row.bucket,
          model: row.model,
          requests: row.requests,
          errors: row.errors,
          error_rate: row.requests === 0 ? 0 : row.errors / row.requests,
          latency_p50_ms: row.latencyP50Ms,
          latency_p95_ms: row.latencyP95Ms,
          latency_mean_ms: row.latencyMeanMs,
        })),
      };
    },
  );

  return [generations, csv, performance];
}

/**
 * Writes a chunk, then waits while the socket's buffer is full; a client that takes nothing for
 * the read deadline is disconnected, which ends the export.
 */
async function write(outgoing: ServerResponse, chunk: string): Promise<void> {
  if (chunk === "" || outgoing.destroyed || outgoing.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      outgoing.off("drain", done);
      outgoing.off("close", done);
      resolve();
    };
    const timer = setTimeout(() => {
      outgoing.destroy();
      done();
    }, DEFAULT_CLIENT_READ_TIMEOUT_MS);
    outgoing.once("drain", done);
    outgoing.once("close", done);
  });
}
