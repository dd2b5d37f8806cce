import assert from "node:assert/strict";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";

// With sequential scans priced out, a plan shows whether an index serves the query at all.
async function explainWithoutSeqScan(
  sql: { transaction<T>(fn: (tx: { query<R>(text: string): Promise<R[]> }) => Promise<T>): Promise<T> },
  query: string,
) {
  return sql.transaction(async (tx) => {
    await tx.query("SET LOCAL enable_seqscan = off");
    return (await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${query}`))
      .map((row) => row["QUERY PLAN"])
      .join("\n");
  });
}

forEachStorageMode("audit log pages read an index, filtered or not", async ({ sql }) => {
  const page = "ORDER BY id DESC LIMIT 51";
  const plans = {
    all: await explainWithoutSeqScan(sql, `SELECT * FROM audit_log WHERE id < 1000 ${page}`),
    workspace: await explainWithoutSeqScan(
      sql,
      `SELECT * FROM audit_log WHERE workspace_id = 'w' AND id < 1000 ${page}`,
    ),
    key: await explainWithoutSeqScan(
      sql,
      `SELECT * FROM audit_log WHERE api_key_id = 'k' AND id < 1000 ${page}`,
    ),
  };
  assert.match(plans.all, /audit_log_pkey/, plans.all);
  assert.match(plans.workspace, /audit_log_workspace_id_idx/, plans.workspace);
  assert.match(plans.key, /audit_log_key_id_idx/, plans.key);
  // Each is a range scan in index order: no sort of the filtered rows.
  for (const plan of Object.values(plans)) assert.doesNotMatch(plan, /Sort/, plan);
});

forEachStorageMode("every key's spend of a workspace reads the key and spend indexes", async ({ sql }) => {
  const plan = await explainWithoutSeqScan(
    sql,
    `SELECT k.id, s.total FROM api_keys k
     CROSS JOIN LATERAL (SELECT SUM(g.cost_micro_usd) AS total FROM generations g WHERE g.api_key_id = k.id) s
     WHERE k.workspace_id = 'w'`,
  );
  assert.match(plan, /api_keys_workspace_created_idx/, plan);
  assert.match(plan, /generations_key_created_idx/, plan);
});

forEachStorageMode("every key's spend of a workspace, per window, in one call", async ({ store }) => {
  const workspace = await store.workspaces.create({
    name: "w",
    creditsMicroUsd: 1_000_000,
    invoicing: false,
  });
  const other = await store.workspaces.create({ name: "o", creditsMicroUsd: 1_000_000, invoicing: false });
  const first = (await store.apiKeys.create({ workspaceId: workspace.id, limits: { dailyMicroUsd: 7 } })).key;
  const second = (await store.apiKeys.create({ workspaceId: workspace.id })).key;
  await store.apiKeys.create({ workspaceId: other.id });
  const rows = await store.keyLimits.sumWorkspaceKeySpend({
    workspaceId: workspace.id,
    daily: { since: new Date("2026-03-01T00:00:00Z"), until: new Date("2026-03-02T00:00:00Z") },
    monthly: { since: new Date("2026-03-01T00:00:00Z"), until: new Date("2026-04-01T00:00:00Z") },
  });
  assert.deepEqual(
    rows.map((row) => [row.apiKeyId, row.daily, row.monthly, row.total, row.limits.dailyMicroUsd]),
    [
      [first.id, 0, 0, 0, 7],
      [second.id, 0, 0, 0, null],
    ],
  );
});
