/**
 * Admin API routes the web console's key and audit pages read, and the console playground's key
 * minting (under `/internal/admin`, header `X-Internal-Token`, errors in the common envelope):
 *
 * - `GET /workspaces/{id}/key-spend`: every key of a workspace with its limits and settled spend
 *   per window, in one statement (the key list shows it without a call per key).
 * - `GET /audit-log`: audit entries newest first, keyset-paged by `before` (an entry id).
 * - `POST /playground-keys`: a one-time playground key for the console's operator, minted by the
 *   same rules as the platform's `POST /api/v1/playground-keys` (docs/decisions/0335-console-playground-keys.md).
 */
import { z } from "zod";
import { encodeKeyLimits } from "../../admin/admin-wire.js";
import { isStorableText, STORABLE_TEXT_RULE } from "../../admin/storable-text.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import { mintPlaygroundKey } from "../../auth/mint-playground-key.js";
import type { PlaygroundKeyPolicy } from "../../auth/playground-key-policy.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { computeLimitWindows } from "../../limits/limit-windows.js";
import type { AuditEntry } from "../../limits/ports.js";
import type { SpendGuard } from "../../limits/spend-guard.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import type { Store } from "../../storage/store.js";
import { COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createAdminRouteFactory, readAdminBody } from "./internal-admin-route.js";

export const AUDIT_PAGE_LIMIT = { default: 50, max: 200 } as const;
const MAX_OPERATOR_LENGTH = 100;

export interface AdminConsoleRoutesDeps {
  store: Store;
  spendGuard: Pick<SpendGuard, "now">;
  internalSecret: string;
  playgroundKeyPolicy: PlaygroundKeyPolicy;
}

const microSchema = z.string().meta({ description: "Exact integer micro-USD, as a decimal string" });
const spentSchema = z.object({ spent_usd: z.number(), spent_micro_usd: microSchema });

const keySpendListSchema = z
  .object({
    workspace_id: z.string(),
    windows: z.object({
      daily: z.object({ start: z.string(), resets_at: z.string() }),
      monthly: z.object({ start: z.string(), resets_at: z.string() }),
    }),
    data: z.array(
      z.object({
        key_id: z.string(),
        limits: z
          .object({})
          .loose()
          .meta({ description: "The key's limits, as GET /internal/admin/keys/{id}" }),
        spend: z.object({
          daily: spentSchema,
          monthly: spentSchema,
          total: spentSchema.extend({
            window_start: z
              .string()
              .nullable()
              .meta({ description: "Last reset; null: since the key exists" }),
          }),
        }),
      }),
    ),
  })
  .meta({ id: "AdminKeySpendList" });

const auditEntrySchema = z
  .object({
    id: z.string().meta({ description: "Increasing; pass the last one as `before` for the next page" }),
    action: z.string().meta({ description: "key.limits_updated, key.total_reset" }),
    actor: z.string(),
    workspace_id: z.string(),
    api_key_id: z.string().nullable(),
    details: z.object({}).loose().meta({ description: "Before/after values; money as micro-USD strings" }),
    created_at: z.string(),
  })
  .meta({ id: "AdminAuditEntry" });

const auditPageSchema = z
  .object({
    data: z.array(auditEntrySchema),
    next_before: z.string().nullable().meta({ description: "`before` of the next page; null: no more" }),
  })
  .meta({ id: "AdminAuditPage" });

const mintBody = z.strictObject({
  workspace_id: z.string().meta({ description: "The workspace the playground's calls are billed to" }),
  operator: z
    .string()
    .optional()
    .meta({ description: 'Who uses the console (user id "console:<operator>"); default "console"' }),
});

const mintAnswer = z
  .object({
    key: z.string().meta({ description: "Key material, valid for one request" }),
    expires_at: z.string(),
    source: z.literal("playground"),
    user_id: z.string(),
  })
  .meta({ id: "AdminPlaygroundKey" });

export function createAdminConsoleRoutes(deps: AdminConsoleRoutesDeps): RouteDefinition[] {
  const route = createAdminRouteFactory(deps.internalSecret);
  // What the console reads must never come from a cache.
  const noStore = { noStore: true } as const;

  const requireWorkspace = async (id: string, param: string) => {
    const workspace = id === "" ? null : await deps.store.workspaces.get(id);
    if (!workspace) throw createUnknownWorkspaceError(id, param);
    return workspace;
  };

  const keySpend = route(
    {
      method: "GET",
      path: "/workspaces/{id}/key-spend",
      summary: "Every key of a workspace with its limits and spend today, this month and in total",
      request: { params: z.object({ id: z.string() }) },
      responses: { 200: jsonResponse(keySpendListSchema, "Keys, oldest first"), ...COMMON_ERRORS },
    },
    async (c) => {
      const workspace = await requireWorkspace(c.req.param("id") ?? "", "id");
      // The limits' clock, as admission and each key's own spend page use.
      const windows = computeLimitWindows(await deps.spendGuard.now(), null);
      const range = (window: { startMs: number; endMs: number | null }) => ({
        since: new Date(window.startMs),
        until: new Date(window.endMs!),
      });
      const rows = await deps.store.keyLimits.sumWorkspaceKeySpend({
        workspaceId: workspace.id,
        daily: range(windows.daily),
        monthly: range(windows.monthly),
      });
      const spent = (micro: number) => ({
        spent_usd: convertMicroUsdToUsd(micro),
        spent_micro_usd: String(micro),
      });
      const describe = (window: { startMs: number; endMs: number | null }) => ({
        start: new Date(window.startMs).toISOString(),
        resets_at: new Date(window.endMs!).toISOString(),
      });
      return {
        workspace_id: workspace.id,
        windows: { daily: describe(windows.daily), monthly: describe(windows.monthly) },
        data: rows.map((row) => ({
          key_id: row.apiKeyId,
          limits: encodeKeyLimits(row.limits),
          spend: {
            daily: spent(row.daily),
            monthly: spent(row.monthly),
            total: Object.assign(spent(row.total), {
              window_start: row.limits.totalResetAt?.toISOString() ?? null,
            }),
          },
        })),
      };
    },
    noStore,
  );

  const auditLog = route(
    {
      method: "GET",
      path: "/audit-log",
      summary: "Audit log of admin changes, newest first (keyset paging by ?before=)",
      request: {
        query: z.object({
          workspace_id: z.string().optional().meta({ description: "Only this workspace's entries" }),
          key_id: z.string().optional().meta({ description: "Only this key's entries" }),
          before: z.string().optional().meta({ description: "next_before of the previous page" }),
          limit: z
            .int()
            .min(1)
            .max(AUDIT_PAGE_LIMIT.max)
            .optional()
            .meta({ description: `default ${AUDIT_PAGE_LIMIT.default}` }),
        }),
      },
      responses: { 200: jsonResponse(auditPageSchema, "One page of entries"), ...COMMON_ERRORS },
    },
    async (c) => {
      const limit = readLimit(c.req.query("limit"));
      const workspaceId = readOptionalId(c.req.query("workspace_id"), "workspace_id");
      if (workspaceId !== undefined) await requireWorkspace(workspaceId, "workspace_id");
      const before = c.req.query("before") || undefined;
      // One more than asked says whether another page exists without a count.
      const entries = await deps.store.keyLimits.listAudit({
        workspaceId,
        apiKeyId: readOptionalId(c.req.query("key_id"), "key_id"),
        beforeId: before,
        limit: limit + 1,
      });
      const page = entries.slice(0, limit);
      return {
        data: page.map(encodeAuditEntry),
        next_before: entries.length > limit ? page[page.length - 1].id : null,
      };
    },
    noStore,
  );

  const mint = route(
    {
      method: "POST",
      path: "/playground-keys",
      summary: "Mint a one-time playground key for the console's operator",
      request: { body: mintBody },
      responses: { 201: jsonResponse(mintAnswer, "The minted key"), ...COMMON_ERRORS },
    },
    async (c) => {
      const body = await readAdminBody(c, mintBody);
      const workspace = await requireWorkspace(body.workspace_id.trim(), "workspace_id");
      const operator = readOperator(body.operator);
      const userId = `console:${operator}`;
      const minted = await mintPlaygroundKey(deps.store, deps.playgroundKeyPolicy, {
        workspaceId: workspace.id,
        userId,
        source: "playground",
      });
      await deps.store.keyLimits.appendAudit({
        action: "key.playground_minted",
        actor: operator,
        workspaceId: workspace.id,
        apiKeyId: minted.keyId,
        details: {
          after: { source: "playground", user_id: userId, expires_at: minted.expiresAt.toISOString() },
        },
      });
      return {
        key: minted.secret,
        expires_at: minted.expiresAt.toISOString(),
        source: "playground",
        user_id: userId,
      };
    },
    { status: 201, noStore: true },
  );

  return [keySpend, auditLog, mint];
}

function encodeAuditEntry(entry: AuditEntry) {
  return {
    id: entry.id,
    action: entry.action,
    actor: entry.actor,
    workspace_id: entry.workspaceId,
    api_key_id: entry.apiKeyId,
    details: entry.details,
    created_at: entry.createdAt.toISOString(),
  };
}

function readLimit(text: string | undefined): number {
  if (text === undefined || text === "") return AUDIT_PAGE_LIMIT.default;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > AUDIT_PAGE_LIMIT.max) {
    throw GatewayError.invalidRequest(`limit must be an integer from 1 to ${AUDIT_PAGE_LIMIT.max}`, "limit");
  }
  return value;
}

function readOptionalId(text: string | undefined, param: string): string | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  if (!isStorableText(text)) throw GatewayError.invalidRequest(`${param} ${STORABLE_TEXT_RULE}`, param);
  return text.trim();
}

function readOperator(text: string | undefined): string {
  const operator = (text ?? "").trim() || "console";
  if (operator.length > MAX_OPERATOR_LENGTH || !isStorableText(operator)) {
    throw GatewayError.invalidRequest(
      `operator must be at most ${MAX_OPERATOR_LENGTH} characters of text`,
      "operator",
    );
  }
  return operator;
}
