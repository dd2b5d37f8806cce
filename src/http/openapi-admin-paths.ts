/**
 * The internal admin API (`/internal/admin`, header `X-Internal-Token`), described in
 * /openapi.json so every implemented endpoint is documented. Field-level docs: docs/admin-api.md.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { commonErrorSchema } from "./openapi-schemas.js";

type Registry = OpenAPIHono["openAPIRegistry"];

const workspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    balance_usd: z.number(),
    balance_micro_usd: z.string(),
    invoicing: z.boolean(),
    locked: z.boolean(),
    created_at: z.string(),
  })
  .openapi("AdminWorkspace");

export const keySchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    display: z.string(),
    status: z.enum(["active", "disabled", "revoked"]),
    models: z.array(z.string()).nullable(),
    expires_at: z.string().nullable(),
  })
  .loose()
  .openapi("AdminKey");

const ADMIN_PATHS: Array<{
  method: "get" | "post" | "patch";
  path: string;
  summary: string;
  body?: boolean;
  /** Answers `{data: [...]}` rather than one record. */
  list?: boolean;
}> = [
  {
    method: "post",
    path: "/internal/admin/workspaces",
    summary: "Create a workspace (a taken name is refused unless allow_duplicate_name is true)",
    body: true,
  },
  {
    method: "get",
    path: "/internal/admin/workspaces",
    summary: "List workspaces, oldest first (?name= exact name, ?limit= 1..10000, default 100)",
    list: true,
  },
  { method: "get", path: "/internal/admin/workspaces/{id}", summary: "Show a workspace" },
  {
    method: "post",
    path: "/internal/admin/workspaces/{id}/credit",
    summary: "Add or remove credit",
    body: true,
  },
  { method: "patch", path: "/internal/admin/workspaces/{id}", summary: "Set invoicing / locked", body: true },
  { method: "post", path: "/internal/admin/keys", summary: "Create a key (secret shown once)", body: true },
  {
    method: "get",
    path: "/internal/admin/keys",
    summary: "List a workspace's keys (?workspace_id=)",
    list: true,
  },
  { method: "get", path: "/internal/admin/keys/{id}", summary: "Show a key with its limits and spend" },
  {
    method: "patch",
    path: "/internal/admin/keys/{id}",
    summary: "Update limits, rate limit, allowlist",
    body: true,
  },
  {
    method: "post",
    path: "/internal/admin/keys/{id}/reset-total",
    summary: "Reset total spend (audit-logged)",
    body: true,
  },
  { method: "post", path: "/internal/admin/keys/{id}/disable", summary: "Disable a key" },
  { method: "post", path: "/internal/admin/keys/{id}/enable", summary: "Re-enable a disabled key" },
  { method: "post", path: "/internal/admin/keys/{id}/revoke", summary: "Revoke a key (final)" },
];

export function registerAdminPaths(registry: Registry): void {
  registry.registerComponent("securitySchemes", "internalToken", {
    type: "apiKey",
    in: "header",
    name: "X-Internal-Token",
  });
  for (const entry of ADMIN_PATHS) {
    const isWorkspace = entry.path.includes("/workspaces");
    const record = isWorkspace ? workspaceSchema : keySchema;
    registry.registerPath({
      method: entry.method,
      path: entry.path,
      summary: entry.summary,
      tags: ["internal"],
      security: [{ internalToken: [] }],
      ...(entry.path.includes("{id}")
        ? { request: { params: z.object({ id: z.string() }), ...(entry.body ? jsonBody() : {}) } }
        : entry.body
          ? { request: jsonBody() }
          : {}),
      responses: {
        200: {
          description: "OK",
          content: {
            "application/json": {
              schema: entry.list
                ? z.object({ data: z.array(record) })
                : isWorkspace
                  ? z.object({ workspace: workspaceSchema })
                  : z.object({ key: keySchema }).loose(),
            },
          },
        },
        "4XX": { description: "Error", content: { "application/json": { schema: commonErrorSchema } } },
      },
    });
  }
}

function jsonBody() {
  return { body: { content: { "application/json": { schema: z.object({}).loose() } } } };
}
