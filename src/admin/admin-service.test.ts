import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestStore, forEachStorageMode } from "../../test/helpers/storage-modes.js";
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import { GatewayError } from "../errors/gateway-error.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import type { SharedState } from "../storage/store.js";
import { createAdminService } from "./admin-service.js";

function isInvalidRequest(pattern: RegExp, param?: string) {
  return (error: unknown) =>
    error instanceof GatewayError &&
    error.code === "invalid_request" &&
    pattern.test(error.message) &&
    (param === undefined || error.param === param);
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

forEachStorageMode("admin service: workspaces with exact credit", async ({ store }) => {
  const admin = createAdminService({ store, state: await openSharedState({}) });
  const workspace = await admin.createWorkspace({ name: "  Acme  ", creditsUsd: "0.000001" });
  assert.equal(workspace.name, "Acme");
  assert.equal(workspace.balanceMicroUsd, 1);
  assert.equal(workspace.invoicing, false);
  assert.equal((await admin.creditWorkspace(workspace.id, "2.5")).balanceMicroUsd, 2_500_001);
  assert.equal((await admin.creditWorkspace(workspace.id, -0.5)).balanceMicroUsd, 2_000_001);
  const updated = await admin.updateWorkspace(workspace.id, { locked: true, invoicing: true });
  assert.deepEqual([updated.locked, updated.invoicing], [true, true]);

  await assert.rejects(
    admin.createWorkspace({ name: " " }),
    isInvalidRequest(/name must not be empty/, "name"),
  );
  await assert.rejects(
    admin.createWorkspace({ name: "x", creditsUsd: "-1" }),
    isInvalidRequest(/negative/, "credits_usd"),
  );
  await assert.rejects(
    admin.createWorkspace({ name: "x", creditsUsd: "1.0000001" }),
    isInvalidRequest(/6 decimals/, "credits_usd"),
  );
  await assert.rejects(admin.creditWorkspace(workspace.id, "0"), isInvalidRequest(/zero/, "usd"));
  await assert.rejects(admin.creditWorkspace(workspace.id, "ten"), isInvalidRequest(/decimal/, "usd"));
  await assert.rejects(
    admin.creditWorkspace("ws_missing", "1"),
    isInvalidRequest(/Unknown workspace "ws_missing"/),
  );
  await assert.rejects(admin.updateWorkspace(workspace.id, {}), isInvalidRequest(/Nothing to update/));
  await assert.rejects(
    admin.updateWorkspace("ws_missing", { locked: false }),
    isInvalidRequest(/Unknown workspace/),
  );
});

forEachStorageMode("admin service: keys, status changes and their broadcast", async ({ store }) => {
  const state = await openSharedState({});
  const announced: string[] = [];
  await state.subscribe(KEY_CHANGED_CHANNEL, (message) => announced.push(message));
  const admin = createAdminService({ store, state });
  const workspace = await admin.createWorkspace({ name: "Acme" });

  const expiresAt = new Date(Date.now() + 86_400_000);
  const { key, secret } = await admin.createKey({
    workspaceId: workspace.id,
    name: "ci",
    models: ["openai/gpt-4o", " anthropic/claude-sonnet-4 ", "openai/gpt-4o"],
    expiresAt,
    memberId: "user_1",
  });
  assert.match(secret, /^hi-/);
  assert.deepEqual(key.allowedModels, ["openai/gpt-4o", "anthropic/claude-sonnet-4"]);
  assert.equal(key.expiresAt?.getTime(), expiresAt.getTime());
  assert.equal(key.memberId, "user_1");

  assert.equal((await admin.setKeyStatus(key.id, "disabled")).status, "disabled");
  assert.equal((await admin.setKeyStatus(key.id, "active")).status, "active");
  assert.equal((await admin.setKeyStatus(key.id, "revoked")).status, "revoked");
  await assert.rejects(admin.setKeyStatus(key.id, "active"), isInvalidRequest(/revocation is final/));
  await assert.rejects(admin.setKeyStatus("key_missing", "disabled"), isInvalidRequest(/Unknown API key/));
  await flush();
  assert.deepEqual(announced, Array(3).fill(JSON.stringify({ keyId: key.id })));

  assert.deepEqual(
    (await admin.listKeys(workspace.id)).map((each) => [each.id, each.status]),
    [[key.id, "revoked"]],
  );
  await assert.rejects(admin.listKeys("ws_missing"), isInvalidRequest(/Unknown workspace/, "workspace_id"));
});

test("admin service: key input validation", async () => {
  const { store, cleanup } = await createTestStore("embedded");
  try {
    const admin = createAdminService({ store, state: await openSharedState({}) });
    const { id } = await admin.createWorkspace({ name: "W" });
    const cases: Array<[Parameters<typeof admin.createKey>[0], RegExp, string]> = [
      [{ workspaceId: "ws_missing" }, /Unknown workspace/, "workspace_id"],
      [{ workspaceId: "" }, /workspace_id is required/, "workspace_id"],
      [{ workspaceId: id, models: [] }, /must not be empty/, "models"],
      [{ workspaceId: id, models: ["gpt-4o"] }, /creator\/model/, "models"],
      [{ workspaceId: id, models: ["openai/gpt 4o"] }, /creator\/model/, "models"],
      [{ workspaceId: id, expiresAt: new Date(Date.now() - 1_000) }, /in the future/, "expires_at"],
      [{ workspaceId: id, expiresAt: new Date("nope") }, /valid date/, "expires_at"],
      [{ workspaceId: id, name: "x".repeat(201) }, /at most 200/, "name"],
      [{ workspaceId: id, memberId: 42 as unknown as string }, /must be a string/, "member_id"],
    ];
    for (const [input, pattern, param] of cases) {
      await assert.rejects(admin.createKey(input), isInvalidRequest(pattern, param), JSON.stringify(input));
    }
    assert.deepEqual(await admin.listKeys(id), []);
  } finally {
    await cleanup();
  }
});

test("admin service: a failed broadcast does not undo the committed change", async () => {
  const { store, cleanup } = await createTestStore("embedded");
  try {
    const brokenState: SharedState = {
      ...(await openSharedState({})),
      publish: async () => {
        throw new Error("Redis down");
      },
    };
    const admin = createAdminService({ store, state: brokenState });
    const { id } = await admin.createWorkspace({ name: "W" });
    const { key } = await admin.createKey({ workspaceId: id });
    assert.equal((await admin.setKeyStatus(key.id, "disabled")).status, "disabled");
    assert.equal((await store.apiKeys.get(key.id))?.status, "disabled");
  } finally {
    await cleanup();
  }
});

forEachStorageMode(
  "admin service: a NUL or a lone surrogate in an id or a text field is refused, never sent to the database",
  async ({ store }) => {
    const admin = createAdminService({ store, state: await openSharedState({}) });
    const workspace = await admin.createWorkspace({ name: "nul" });
    const { key } = await admin.createKey({ workspaceId: workspace.id });
    const nul = /must be text without NUL characters or lone surrogates/;
    await assert.rejects(admin.createWorkspace({ name: "a\u0000b" }), isInvalidRequest(nul, "name"));
    await assert.rejects(admin.creditWorkspace("ws\u0000", "1"), isInvalidRequest(nul, "id"));
    await assert.rejects(admin.updateWorkspace("\u0000", { locked: true }), isInvalidRequest(nul, "id"));
    await assert.rejects(admin.listKeys("\u0000"), isInvalidRequest(nul, "workspace_id"));
    await assert.rejects(
      admin.createKey({ workspaceId: workspace.id, memberId: "m\u0000" }),
      isInvalidRequest(nul, "member_id"),
    );
    await assert.rejects(admin.getKey(`${key.id}\u0000`), isInvalidRequest(nul, "id"));
    await assert.rejects(admin.setKeyStatus("\u0000", "disabled"), isInvalidRequest(nul, "id"));
    await assert.rejects(admin.resetKeyTotal(key.id, "a\u0000"), isInvalidRequest(nul, "actor"));
    // A JSON body's "\udc00": PostgreSQL refused the statement, and the answer was a 500.
    await assert.rejects(admin.createWorkspace({ name: "\udc00\udc00" }), isInvalidRequest(nul, "name"));
    await assert.rejects(admin.createWorkspace({ name: "a\ud83d" }), isInvalidRequest(nul, "name"));
    await assert.rejects(admin.getKey(`${key.id}\udfff`), isInvalidRequest(nul, "id"));
    await assert.rejects(
      admin.createKey({ workspaceId: workspace.id, name: "\ud800", actor: "x" }),
      isInvalidRequest(nul, "name"),
    );
    assert.equal((await admin.createWorkspace({ name: "pair \ud83d\ude00" })).name, "pair \ud83d\ude00");
    assert.equal((await admin.listKeys(workspace.id)).length, 1, "no key was created");
  },
);

forEachStorageMode(
  "admin service: a change and its audit entry commit together (a failed entry undoes the credit, so a retry cannot add it twice)",
  async ({ store, sql }) => {
    const admin = createAdminService({ store, state: await openSharedState({}) });
    const workspace = await admin.createWorkspace({ name: "audited", creditsUsd: "1" });
    const key = await admin.createKey({ workspaceId: workspace.id });
    const ledger = async () =>
      (
        await sql.query("SELECT count(*)::int AS n FROM ledger_entries WHERE workspace_id = $1", [
          workspace.id,
        ])
      )[0]?.n;
    const ledgerBefore = await ledger();
    // The audit log refuses every new entry from here on: each change must then fail whole.
    await sql.query("ALTER TABLE audit_log ADD CONSTRAINT refuse_all CHECK (action = '') NOT VALID");
    try {
      await assert.rejects(admin.creditWorkspace(workspace.id, "2"));
      assert.equal((await admin.getWorkspace(workspace.id)).balanceMicroUsd, 1_000_000, "credit rolled back");
      assert.equal(await ledger(), ledgerBefore, "no ledger entry for the rolled-back credit");
      await assert.rejects(admin.updateWorkspace(workspace.id, { locked: true }));
      assert.equal((await admin.getWorkspace(workspace.id)).locked, false);
      await assert.rejects(admin.setKeyStatus(key.key.id, "disabled"));
      assert.equal((await admin.getKey(key.key.id)).key.status, "active");
      const keysBefore = (await admin.listKeys(workspace.id)).length;
      await assert.rejects(admin.createKey({ workspaceId: workspace.id }));
      assert.equal((await admin.listKeys(workspace.id)).length, keysBefore);
      await assert.rejects(admin.createWorkspace({ name: "never-created", creditsUsd: "5" }));
      assert.equal((await store.workspaces.list({ name: "never-created", limit: 10 })).length, 0);
    } finally {
      await sql.query("ALTER TABLE audit_log DROP CONSTRAINT refuse_all");
    }
    // With the log back, the retried credit is added once and logged once.
    assert.equal((await admin.creditWorkspace(workspace.id, "2")).balanceMicroUsd, 3_000_000);
    const credits = await store.keyLimits.listAudit({ workspaceId: workspace.id });
    assert.equal(credits.filter((entry) => entry.action === "workspace.credited").length, 1);
  },
);
