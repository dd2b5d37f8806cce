/** Workspaces and their credit ledger. Every balance change writes a ledger entry in the same transaction. */

import type { WorkspaceRepository } from "../../admin/ports.js";
import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import type { Workspace } from "../../auth/accounts.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { changeWithAudit } from "./audit-rows.js";
import { createId } from "./create-id.js";
import { assertSafeInteger, readInteger } from "./read-integer.js";
import type { SqlClient } from "./sql-client.js";

export interface WorkspaceRow {
  id: string;
  name: string;
  balance_micro_usd: unknown;
  invoicing: boolean;
  locked: boolean;
  created_at: Date;
  response_cache_ttl_seconds: number | null;
}

export const WORKSPACE_COLUMNS =
  "id, name, balance_micro_usd, invoicing, locked, created_at, response_cache_ttl_seconds";

export function readWorkspaceRow(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    balanceMicroUsd: readInteger(row.balance_micro_usd, "balance_micro_usd"),
    invoicing: row.invoicing,
    locked: row.locked,
    createdAt: new Date(row.created_at),
    responseCacheTtlSeconds: row.response_cache_ttl_seconds ?? null,
  };
}

export function createDuplicateWorkspaceNameError(existing: Workspace): GatewayError {
  return GatewayError.invalidRequest(
    `A workspace named "${existing.name}" already exists (${existing.id}); to create another one ` +
      'with the same name, ask for it (CLI --allow-duplicate-name, admin API "allow_duplicate_name": true)',
    "name",
  );
}

/**
 * The advisory-lock namespace (first key) under which a workspace name is locked while a create
 * checks that it is free; any constant no other lock uses. Names compare exactly (case matters).
 */
const NAME_LOCK_CLASS = 1_937_007_219;

export function createWorkspaceRepository(client: SqlClient): WorkspaceRepository {
  return {
    async create({ name, creditsMicroUsd, invoicing, uniqueName = false }, audit) {
      assertSafeInteger(creditsMicroUsd, "creditsMicroUsd");
      const id = createId("ws");
      return changeWithAudit(client, audit, (outer) =>
        outer.transaction(async (tx) => {
          if (uniqueName) {
            // Two creates of one name at once on two instances: the lock makes the second see the first.
            await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [NAME_LOCK_CLASS, name]);
            const [existing] = await tx.query<WorkspaceRow>(
              `SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE name = $1 ORDER BY created_at, id COLLATE "C" LIMIT 1`,
              [name],
            );
            if (existing) throw createDuplicateWorkspaceNameError(readWorkspaceRow(existing));
          }
          const [row] = await tx.query<WorkspaceRow>(
            `INSERT INTO workspaces (id, name, balance_micro_usd, invoicing)
           VALUES ($1, $2, $3, $4)
           RETURNING ${WORKSPACE_COLUMNS}`,
            [id, name, creditsMicroUsd, invoicing],
          );
          if (creditsMicroUsd !== 0) await insertCreditEntry(tx, id, creditsMicroUsd);
          return readWorkspaceRow(row);
        }),
      );
    },

    async get(id) {
      const [row] = await client.query<WorkspaceRow>(
        `SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE id = $1`,
        [id],
      );
      return row ? readWorkspaceRow(row) : null;
    },

    async credit(id, amountMicroUsd, audit) {
      assertSafeInteger(amountMicroUsd, "amountMicroUsd");
      return changeWithAudit(client, audit, (outer) =>
        outer.transaction(async (tx) => {
          const [row] = await tx.query<WorkspaceRow>(
            `UPDATE workspaces SET balance_micro_usd = balance_micro_usd + $2
           WHERE id = $1
           RETURNING ${WORKSPACE_COLUMNS}`,
            [id, amountMicroUsd],
          );
          if (!row) throw createUnknownWorkspaceError(id);
          await insertCreditEntry(tx, id, amountMicroUsd);
          return readWorkspaceRow(row);
        }),
      );
    },

    async update(id, changes, audit) {
      return changeWithAudit(client, audit, async (tx) => {
        const [row] = await tx.query<WorkspaceRow>(
          `UPDATE workspaces
         SET invoicing = COALESCE($2::boolean, invoicing), locked = COALESCE($3::boolean, locked),
           response_cache_ttl_seconds =
             CASE WHEN $4::boolean THEN $5::integer ELSE response_cache_ttl_seconds END
         WHERE id = $1
         RETURNING ${WORKSPACE_COLUMNS}`,
          [
            id,
            changes.invoicing ?? null,
            changes.locked ?? null,
            // null clears the policy, so "given" travels beside the value.
            changes.responseCacheTtlSeconds !== undefined,
            changes.responseCacheTtlSeconds ?? null,
          ],
        );
        if (!row) throw createUnknownWorkspaceError(id);
        return readWorkspaceRow(row);
      });
    },

    async list({ name, limit }) {
      const rows = await client.query<WorkspaceRow>(
        `SELECT ${WORKSPACE_COLUMNS} FROM workspaces
         WHERE $1::text IS NULL OR name = $1
         ORDER BY created_at, id COLLATE "C"
         LIMIT $2`,
        [name ?? null, limit],
      );
      return rows.map(readWorkspaceRow);
    },

    async count() {
      const [row] = await client.query<{ count: unknown }>("SELECT count(*) AS count FROM workspaces");
      return readInteger(row.count, "count");
    },
  };
}

async function insertCreditEntry(tx: SqlClient, workspaceId: string, amountMicroUsd: number): Promise<void> {
  await tx.query(
    "INSERT INTO ledger_entries (workspace_id, kind, amount_micro_usd) VALUES ($1, 'credit', $2)",
    [workspaceId, amountMicroUsd],
  );
}
