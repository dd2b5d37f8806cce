/** Workspaces and their credit ledger. Every balance change writes a ledger entry in the same transaction. */
import { GatewayError } from "../errors/gateway-error.js";
import { createId } from "./create-id.js";
import { assertSafeInteger, readInteger } from "./read-integer.js";
import type { SqlClient } from "./sql-client.js";
import type { Workspace, WorkspaceRepository } from "./types.js";

export interface WorkspaceRow {
  id: string;
  name: string;
  balance_micro_usd: unknown;
  invoicing: boolean;
  locked: boolean;
  created_at: Date;
}

export const WORKSPACE_COLUMNS = "id, name, balance_micro_usd, invoicing, locked, created_at";

export function readWorkspaceRow(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    balanceMicroUsd: readInteger(row.balance_micro_usd, "balance_micro_usd"),
    invoicing: row.invoicing,
    locked: row.locked,
    createdAt: new Date(row.created_at),
  };
}

export function createUnknownWorkspaceError(id: string, param = "workspace_id"): GatewayError {
  return GatewayError.invalidRequest(`Unknown workspace "${id}"`, param);
}

export function createWorkspaceRepository(client: SqlClient): WorkspaceRepository {
  return {
    async create({ name, creditsMicroUsd, invoicing }) {
      assertSafeInteger(creditsMicroUsd, "creditsMicroUsd");
      const id = createId("ws");
      return client.transaction(async (tx) => {
        const [row] = await tx.query<WorkspaceRow>(
          `INSERT INTO workspaces (id, name, balance_micro_usd, invoicing)
           VALUES ($1, $2, $3, $4)
           RETURNING ${WORKSPACE_COLUMNS}`,
          [id, name, creditsMicroUsd, invoicing],
        );
        if (creditsMicroUsd !== 0) await insertCreditEntry(tx, id, creditsMicroUsd);
        return readWorkspaceRow(row);
      });
    },

    async get(id) {
      const [row] = await client.query<WorkspaceRow>(
        `SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE id = $1`,
        [id],
      );
      return row ? readWorkspaceRow(row) : null;
    },

    async credit(id, amountMicroUsd) {
      assertSafeInteger(amountMicroUsd, "amountMicroUsd");
      return client.transaction(async (tx) => {
        const [row] = await tx.query<WorkspaceRow>(
          `UPDATE workspaces SET balance_micro_usd = balance_micro_usd + $2
           WHERE id = $1
           RETURNING ${WORKSPACE_COLUMNS}`,
          [id, amountMicroUsd],
        );
        if (!row) throw createUnknownWorkspaceError(id);
        await insertCreditEntry(tx, id, amountMicroUsd);
        return readWorkspaceRow(row);
      });
    },

    async update(id, changes) {
      const [row] = await client.query<WorkspaceRow>(
        `UPDATE workspaces
         SET invoicing = COALESCE($2::boolean, invoicing), locked = COALESCE($3::boolean, locked)
         WHERE id = $1
         RETURNING ${WORKSPACE_COLUMNS}`,
        [id, changes.invoicing ?? null, changes.locked ?? null],
      );
      if (!row) throw createUnknownWorkspaceError(id);
      return readWorkspaceRow(row);
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
