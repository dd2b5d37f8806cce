import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestOutcome, createTestStart } from "../../test/helpers/generation-records.js";
import { createTestDatabase, requireMode } from "../../test/helpers/storage-modes.js";
import { IN_MEMORY_DATA_DIR, openStoreWithSqlClient } from "./open-store.js";

/**
 * Two final records 3 ms apart, then the transaction ids (`xmin`) of their rows: one id when they
 * were written by one statement. The second is submitted while the first waits for company (with
 * the linger) or while the first's write is already on its way (without it).
 */
async function transactionsOfTwoFinishes(recordCopiesInRedis: boolean): Promise<number> {
  const database = await createTestDatabase();
  try {
    const { store, client } = await openStoreWithSqlClient({
      databaseUrl: database.url,
      dataDir: IN_MEMORY_DATA_DIR,
      recordCopiesInRedis,
    });
    try {
      const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 0, invoicing: true });
      const { key } = await store.apiKeys.create({ workspaceId: workspace.id });
      const start = (id: string) => createTestStart({ id, workspaceId: workspace.id, apiKeyId: key.id });
      const first = store.generations.finish("req_a", createTestOutcome({ costMicroUsd: 1 }), start("req_a"));
      await new Promise((resolve) => setTimeout(resolve, 3));
      const second = store.generations.finish(
        "req_b",
        createTestOutcome({ costMicroUsd: 2 }),
        start("req_b"),
      );
      await Promise.all([first, second]);
      const rows = await client.query<{ tx: string }>(
        "SELECT xmin::text AS tx FROM generations WHERE id IN ('req_a', 'req_b')",
      );
      assert.equal(rows.length, 2, "both records written");
      return new Set(rows.map((row) => row.tx)).size;
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}

test("PostgreSQL with the records' Redis copies: final records a few milliseconds apart share one commit", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  assert.equal(await transactionsOfTwoFinishes(true), 1);
});

test("PostgreSQL without Redis: a final record is committed at once, as no copy answers other instances meanwhile", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  assert.equal(await transactionsOfTwoFinishes(false), 2);
});
