/** API keys. Only the SHA-256 hash and the display form are stored; the secret is returned once. */

import type { ApiKeyRepository } from "../../admin/ports.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import type { ApiKeyRecord, ApiKeyStatus, RequestSource } from "../../auth/accounts.js";
import { generateApiKey } from "../../auth/api-key.js";
import type { ApiKeyLookup } from "../../auth/ports.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { changeWithAudit } from "./audit-rows.js";
import { createId } from "./create-id.js";
import { isForeignKeyViolation } from "./database-errors.js";
import type { SqlClient } from "./sql-client.js";
import { readWorkspaceRow, WORKSPACE_COLUMNS, type WorkspaceRow } from "./workspace-repository.js";

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  display: string;
  status: ApiKeyStatus;
  allowed_models: string[] | null;
  expires_at: Date | null;
  member_id: string | null;
  source: RequestSource;
  created_at: Date;
  response_cache_ttl_seconds: number | null;
}

const KEY_COLUMNS =
  "id, workspace_id, name, display, status, allowed_models, expires_at, member_id, source, created_at, " +
  "response_cache_ttl_seconds";

function readApiKeyRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    display: row.display,
    status: row.status,
    allowedModels: row.allowed_models,
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    memberId: row.member_id,
    source: row.source,
    createdAt: new Date(row.created_at),
    responseCacheTtlSeconds: row.response_cache_ttl_seconds ?? null,
  };
}

/** Workspace columns under `w_` aliases so one joined row holds both records. */
const JOINED_WORKSPACE_COLUMNS = WORKSPACE_COLUMNS.split(", ")
  .map((column) => `w.${column} AS w_${column}`)
  .join(", ");
const JOINED_KEY_COLUMNS = KEY_COLUMNS.split(", ")
  .map((column) => `k.${column}`)
  .join(", ");

function readJoinedWorkspace(row: Record<string, unknown>): WorkspaceRow {
  const workspace: Record<string, unknown> = {};
  for (const column of WORKSPACE_COLUMNS.split(", ")) workspace[column] = row[`w_${column}`];
  return workspace as unknown as WorkspaceRow;
}

export function createApiKeyRepository(client: SqlClient): ApiKeyRepository & ApiKeyLookup {
  async function get(id: string): Promise<ApiKeyRecord | null> {
    const [row] = await client.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return row ? readApiKeyRow(row) : null;
  }

  return {
    async create(input, audit) {
      const material = generateApiKey();
      try {
        return await changeWithAudit(client, audit, async (tx) => {
          const [row] = await tx.query<ApiKeyRow>(
            `INSERT INTO api_keys
             (id, workspace_id, name, key_hash, display, allowed_models, expires_at, member_id, source,
              daily_limit_micro_usd, monthly_limit_micro_usd, total_limit_micro_usd, requests_per_minute,
              response_cache_ttl_seconds)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
           RETURNING ${KEY_COLUMNS}`,
            [
              createId("key"),
              input.workspaceId,
              input.name ?? "",
              material.hash,
              material.display,
              input.allowedModels ?? null,
              input.expiresAt ?? null,
              input.memberId ?? null,
              input.source ?? "api",
              input.limits?.dailyMicroUsd ?? null,
              input.limits?.monthlyMicroUsd ?? null,
              input.limits?.totalMicroUsd ?? null,
              input.limits?.requestsPerMinute ?? null,
              input.responseCacheTtlSeconds ?? null,
            ],
          );
          return { key: readApiKeyRow(row), secret: material.secret };
        });
      } catch (error) {
        if (isForeignKeyViolation(error)) throw createUnknownWorkspaceError(input.workspaceId);
        throw error;
      }
    },

    async findByHash(hash) {
      const [row] = await client.query<ApiKeyRow & Record<string, unknown>>(
        `SELECT ${JOINED_KEY_COLUMNS}, ${JOINED_WORKSPACE_COLUMNS}
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
         WHERE k.key_hash = $1`,
        [hash],
      );
      if (!row) return null;
      return { key: readApiKeyRow(row), workspace: readWorkspaceRow(readJoinedWorkspace(row)) };
    },

    get,

    async setStatus(id, status, audit) {
      return changeWithAudit(client, audit, async (tx) => {
        // Revocation is final: the WHERE clause refuses to move a revoked key anywhere else.
        const [row] = await tx.query<ApiKeyRow>(
          `UPDATE api_keys SET status = $2, updated_at = now()
           WHERE id = $1 AND (status <> 'revoked' OR $2 = 'revoked')
           RETURNING ${KEY_COLUMNS}`,
          [id, status],
        );
        if (row) return readApiKeyRow(row);
        const [existing] = await tx.query<{ id: string }>("SELECT id FROM api_keys WHERE id = $1", [id]);
        if (!existing) throw GatewayError.invalidRequest(`Unknown API key "${id}"`, "id");
        throw GatewayError.invalidRequest(`API key "${id}" is revoked; revocation is final`, "status");
      });
    },

    async list(workspaceId) {
      const rows = await client.query<ApiKeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id COLLATE "C"`,
        [workspaceId],
      );
      return rows.map(readApiKeyRow);
    },
  };
}
