import assert from "node:assert/strict";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { SqlClient } from "./sql-client.js";

async function readLedger(sql: SqlClient, workspaceId: string) {
  const rows = await sql.query<{ kind: string; amount_micro_usd: unknown; generation_id: string | null }>(
    "SELECT kind, amount_micro_usd, generation_id FROM ledger_entries WHERE workspace_id = $1 ORDER BY id",
    [workspaceId],
  );
  return rows.map((row) => ({
    kind: row.kind,
    amount: Number(row.amount_micro_usd),
    generationId: row.generation_id,
  }));
}

forEachStorageMode("workspace credit is recorded in the ledger and the balance", async ({ store, sql }) => {
  const workspace = await store.workspaces.create({
    name: "Acme",
    creditsMicroUsd: 5_000_000,
    invoicing: false,
  });
  assert.match(workspace.id, /^ws_[0-9A-Za-z]{24}$/);
  assert.equal(workspace.balanceMicroUsd, 5_000_000);
  assert.equal(workspace.invoicing, false);
  assert.equal(workspace.locked, false);
  assert.ok(workspace.createdAt instanceof Date);

  const credited = await store.workspaces.credit(workspace.id, 1);
  assert.equal(credited.balanceMicroUsd, 5_000_001);
  const debited = await store.workspaces.credit(workspace.id, -2_000_000);
  assert.equal(debited.balanceMicroUsd, 3_000_001);

  assert.deepEqual(await readLedger(sql, workspace.id), [
    { kind: "credit", amount: 5_000_000, generationId: null },
    { kind: "credit", amount: 1, generationId: null },
    { kind: "credit", amount: -2_000_000, generationId: null },
  ]);
  assert.deepEqual(await store.workspaces.get(workspace.id), debited);
});

forEachStorageMode("a workspace created without credit has no ledger entry", async ({ store, sql }) => {
  const workspace = await store.workspaces.create({ name: "Free", creditsMicroUsd: 0, invoicing: true });
  assert.equal(workspace.balanceMicroUsd, 0);
  assert.equal(workspace.invoicing, true);
  assert.deepEqual(await readLedger(sql, workspace.id), []);
});

forEachStorageMode("balances above 2^31 and near 2^53 stay exact", async ({ store }) => {
  const big = 2 ** 31 + 7;
  const workspace = await store.workspaces.create({ name: "Big", creditsMicroUsd: big, invoicing: false });
  assert.equal(workspace.balanceMicroUsd, big);
  const huge = Number.MAX_SAFE_INTEGER - big - 1;
  const credited = await store.workspaces.credit(workspace.id, huge);
  assert.equal(credited.balanceMicroUsd, Number.MAX_SAFE_INTEGER - 1);
  assert.equal((await store.workspaces.get(workspace.id))?.balanceMicroUsd, Number.MAX_SAFE_INTEGER - 1);
  await assert.rejects(store.workspaces.credit(workspace.id, 0.5), RangeError);
});

forEachStorageMode("update, count and unknown ids", async ({ store }) => {
  assert.equal(await store.workspaces.count(), 0);
  const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 0, invoicing: false });
  await store.workspaces.create({ name: "V", creditsMicroUsd: 0, invoicing: false });
  assert.equal(await store.workspaces.count(), 2);

  const locked = await store.workspaces.update(workspace.id, { locked: true });
  assert.equal(locked.locked, true);
  assert.equal(locked.invoicing, false);
  const invoicing = await store.workspaces.update(workspace.id, { invoicing: true });
  assert.equal(invoicing.locked, true, "an absent field is left unchanged");
  assert.equal(invoicing.invoicing, true);
  const unlocked = await store.workspaces.update(workspace.id, { locked: false, invoicing: false });
  assert.deepEqual([unlocked.locked, unlocked.invoicing], [false, false]);

  assert.equal(await store.workspaces.get("ws_missing"), null);
  const isUnknown = (error: unknown) =>
    error instanceof GatewayError &&
    error.code === "invalid_request" &&
    /Unknown workspace/.test(error.message);
  await assert.rejects(store.workspaces.credit("ws_missing", 1), isUnknown);
  await assert.rejects(store.workspaces.update("ws_missing", { locked: true }), isUnknown);
});

/**
 * Lets the database clock move past the last write, so the next row is younger by its timestamp
 * alone (the embedded database's clock counts whole milliseconds).
 */
function nextClockTick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

forEachStorageMode(
  "list oldest first, by name; a taken name refused when asked to be unique",
  async ({ store }) => {
    const first = await store.workspaces.create({
      name: "Same",
      creditsMicroUsd: 0,
      invoicing: false,
      uniqueName: true,
    });
    await nextClockTick();
    const other = await store.workspaces.create({ name: "other", creditsMicroUsd: 0, invoicing: false });
    await nextClockTick();
    // Two creates of one name at once: exactly one wins.
    const racing = await Promise.allSettled(
      ["Race", "Race"].map((name) =>
        store.workspaces.create({ name, creditsMicroUsd: 0, invoicing: false, uniqueName: true }),
      ),
    );
    assert.deepEqual(racing.map((outcome) => outcome.status).sort(), ["fulfilled", "rejected"]);
    await assert.rejects(
      store.workspaces.create({ name: "Same", creditsMicroUsd: 0, invoicing: false, uniqueName: true }),
      (error: unknown) =>
        error instanceof GatewayError &&
        error.param === "name" &&
        error.message.includes(`"Same" already exists (${first.id})`),
    );
    await nextClockTick();
    const second = await store.workspaces.create({ name: "Same", creditsMicroUsd: 0, invoicing: false });
    assert.deepEqual(
      (await store.workspaces.list({ limit: 10 })).map((workspace) => workspace.name),
      ["Same", "other", "Race", "Same"],
    );
    assert.deepEqual(
      (await store.workspaces.list({ name: "Same", limit: 10 })).map((workspace) => workspace.id),
      [first.id, second.id],
    );
    assert.deepEqual(await store.workspaces.list({ name: "same", limit: 10 }), [], "names compare exactly");
    assert.deepEqual(
      (await store.workspaces.list({ limit: 1 })).map((workspace) => workspace.id),
      [first.id],
    );
    assert.equal((await store.workspaces.list({ name: "other", limit: 5 }))[0].id, other.id);
  },
);

forEachStorageMode(
  "workspaces created in the same clock tick list in id order, every time",
  async ({ store, sql }) => {
    const created = [];
    for (const name of ["b", "A", "a", "B", "0"]) {
      created.push(await store.workspaces.create({ name, creditsMicroUsd: 0, invoicing: false }));
    }
    await sql.query("UPDATE workspaces SET created_at = '2026-01-01T00:00:00Z'");
    // Byte order, whatever the database's collation: upper case before lower case.
    const byId = created.map((workspace) => workspace.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(
        (await store.workspaces.list({ limit: 10 })).map((workspace) => workspace.id),
        byId,
      );
    }
    assert.deepEqual(
      (await store.workspaces.list({ limit: 2 })).map((workspace) => workspace.id),
      byId.slice(0, 2),
    );
  },
);
