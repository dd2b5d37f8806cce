import assert from "node:assert/strict";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import { hashApiKey, isWellFormedApiKey } from "../../auth/api-key.js";
import { GatewayError } from "../../errors/gateway-error.js";

forEachStorageMode("key create stores only the hash and finds the key by hash", async ({ store, sql }) => {
  const workspace = await store.workspaces.create({ name: "Acme", creditsMicroUsd: 10, invoicing: false });
  const expiresAt = new Date("2031-05-06T07:08:09.123Z");
  const { key, secret } = await store.apiKeys.create({
    workspaceId: workspace.id,
    name: "ci",
    allowedModels: ["openai/gpt-4o", "anthropic/claude-sonnet-4"],
    expiresAt,
    memberId: "member_1",
  });
  assert.ok(isWellFormedApiKey(secret));
  assert.match(key.id, /^key_[0-9A-Za-z]{24}$/);
  assert.equal(key.display, `hi-…${secret.slice(-4)}`);
  assert.equal(key.status, "active");
  assert.equal(key.source, "api");
  assert.deepEqual(key.allowedModels, ["openai/gpt-4o", "anthropic/claude-sonnet-4"]);
  assert.equal(key.expiresAt?.toISOString(), expiresAt.toISOString());
  assert.equal(key.memberId, "member_1");

  const rows = await sql.query<Record<string, unknown>>("SELECT * FROM api_keys");
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key_hash, hashApiKey(secret));
  assert.ok(!JSON.stringify(rows).includes(secret), "the key material is never stored");

  const found = await store.apiKeys.findByHash(hashApiKey(secret));
  assert.deepEqual(found?.key, key);
  assert.deepEqual(found?.workspace, workspace);
  assert.equal(await store.apiKeys.findByHash(hashApiKey(`${secret}x`)), null);
  assert.deepEqual(await store.apiKeys.get(key.id), key);
  assert.equal(await store.apiKeys.get("key_missing"), null);
});

forEachStorageMode("key defaults, listing per workspace and unknown workspace", async ({ store }) => {
  const first = await store.workspaces.create({ name: "A", creditsMicroUsd: 0, invoicing: false });
  const second = await store.workspaces.create({ name: "B", creditsMicroUsd: 0, invoicing: false });
  const a1 = await store.apiKeys.create({ workspaceId: first.id });
  const a2 = await store.apiKeys.create({ workspaceId: first.id, name: "two", source: "playground" });
  const b1 = await store.apiKeys.create({ workspaceId: second.id });
  assert.equal(a1.key.name, "");
  assert.equal(a1.key.allowedModels, null);
  assert.equal(a1.key.expiresAt, null);
  assert.equal(a1.key.memberId, null);
  assert.equal(a2.key.source, "playground");
  assert.notEqual(a1.secret, a2.secret);

  assert.deepEqual(
    (await store.apiKeys.list(first.id)).map((key) => key.id),
    [a1.key.id, a2.key.id],
  );
  assert.deepEqual(
    (await store.apiKeys.list(second.id)).map((key) => key.id),
    [b1.key.id],
  );
  assert.deepEqual(await store.apiKeys.list("ws_missing"), []);
  await assert.rejects(
    store.apiKeys.create({ workspaceId: "ws_missing" }),
    (error) =>
      error instanceof GatewayError && error.code === "invalid_request" && error.param === "workspace_id",
  );
});

forEachStorageMode("key status changes; revocation is final", async ({ store }) => {
  const workspace = await store.workspaces.create({ name: "A", creditsMicroUsd: 0, invoicing: false });
  const { key, secret } = await store.apiKeys.create({ workspaceId: workspace.id });
  assert.equal((await store.apiKeys.setStatus(key.id, "disabled")).status, "disabled");
  assert.equal((await store.apiKeys.findByHash(hashApiKey(secret)))?.key.status, "disabled");
  assert.equal((await store.apiKeys.setStatus(key.id, "active")).status, "active");
  assert.equal((await store.apiKeys.setStatus(key.id, "revoked")).status, "revoked");
  assert.equal(
    (await store.apiKeys.setStatus(key.id, "revoked")).status,
    "revoked",
    "revoking again is a no-op",
  );
  for (const status of ["active", "disabled"] as const) {
    await assert.rejects(store.apiKeys.setStatus(key.id, status), /revocation is final/);
  }
  assert.equal((await store.apiKeys.get(key.id))?.status, "revoked");
  await assert.rejects(store.apiKeys.setStatus("key_missing", "disabled"), /Unknown API key/);
});
