/**
 * Audit-log rows, written in the transaction of the change they describe: a change and its entry
 * are committed together or not at all, so a retried request never repeats a change (a credit
 * added twice) because only its entry failed, and no committed change lacks its entry.
 */
import type { AuditOf, AuditRecord } from "../../limits/ports.js";
import { toPostgresJson } from "./postgres-json.js";
import type { SqlClient } from "./sql-client.js";

export async function insertAuditRow(tx: SqlClient, entry: AuditRecord): Promise<void> {
  await tx.query(
    `INSERT INTO audit_log (action, actor, workspace_id, api_key_id, details)
     VALUES ($1, $2, $3, $4, $5::jsonb)`,
    [entry.action, entry.actor, entry.workspaceId, entry.apiKeyId, toPostgresJson(entry.details)],
  );
}

/**
 * Runs `change`, and with `audit` its entry after it, in one transaction (joining the caller's when
 * there is one). Without `audit` the change runs as it is.
 */
export function changeWithAudit<T>(
  client: SqlClient,
  audit: AuditOf<T> | undefined,
  change: (tx: SqlClient) => Promise<T>,
): Promise<T> {
  if (audit === undefined) return change(client);
  return client.transaction(async (tx) => {
    const result = await change(tx);
    await insertAuditRow(tx, audit(result));
    return result;
  });
}
