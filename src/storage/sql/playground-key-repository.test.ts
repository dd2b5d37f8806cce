import assert from "node:assert/strict";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import type { MintedPlaygroundKey, PlaygroundMintRefusal } from "../../auth/accounts.js";
import { hashApiKey } from "../../auth/api-key.js";
import { GatewayError } from "../../errors/gateway-error.js";

const MINUTE = 60_000;

function assertMinted(result: MintedPlaygroundKey | PlaygroundMintRefusal): MintedPlaygroundKey {
  assert.ok(!("rateLimited" in result), "expected a minted key");
  return result;
}

forEachStorageMode("playground keys: minted as a one-time api key of the workspace", async ({ store }) => {
  const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 1_000, invoicing: false });
  const before = Date.now();
  const minted = assertMinted(
    await store.playgroundKeys.mint({
      workspaceId: workspace.id,
      userId: "user-1",
      source: "chat",
      ttlMs: 10 * MINUTE,
      limit: 10,
      windowMs: MINUTE,
    }),
  );
  assert.match(minted.secret, /^hi-/);
  assert.equal(minted.source, "chat");
  const ttl = minted.expiresAt.getTime() - before;
  assert.ok(ttl > 10 * MINUTE - 5_000 && ttl < 10 * MINUTE + 5_000, `ttl ${ttl}`);
  const found = await store.apiKeys.findByHash(hashApiKey(minted.secret));
  assert.equal(found?.key.id, minted.keyId);
  assert.equal(found?.key.source, "chat");
  assert.equal(found?.key.workspaceId, workspace.id);
  assert.equal(found?.key.memberId, "user-1");
});

forEachStorageMode("playground keys: exactly one of 20 concurrent consumers wins", async ({ store }) => {
  const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 1_000, invoicing: false });
  const minted = assertMinted(
    await store.playgroundKeys.mint({
      workspaceId: workspace.id,
      userId: "u",
      source: "playground",
      ttlMs: MINUTE,
      limit: 10,
      windowMs: MINUTE,
    }),
  );
  const results = await Promise.all(
    Array.from({ length: 20 }, () => store.playgroundKeys.consume(minted.keyId)),
  );
  assert.equal(results.filter(Boolean).length, 1);
  assert.equal(await store.playgroundKeys.consume(minted.keyId), false);
  assert.equal(await store.playgroundKeys.consume("key_unknown"), false);
});

forEachStorageMode(
  "playground keys: expired keys cannot be consumed and are purged, usage stays",
  async (context) => {
    const { store, sql } = context;
    const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 1_000, invoicing: false });
    const regular = await store.apiKeys.create({ workspaceId: workspace.id });
    const mint = (ttlMs: number) =>
      store.playgroundKeys.mint({
        workspaceId: workspace.id,
        userId: "u",
        source: "playground",
        ttlMs,
        limit: 10,
        windowMs: MINUTE,
      });
    const shortLived = assertMinted(await mint(50));
    const longLived = assertMinted(await mint(MINUTE));
    await store.generations.start({
      id: "req_from_playground",
      workspaceId: workspace.id,
      apiKeyId: shortLived.keyId,
      model: "a/b",
      ingressFormat: "chat_completions",
      source: "playground",
      stream: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(await store.playgroundKeys.consume(shortLived.keyId), false, "expired keys are refused");
    assert.equal(await store.playgroundKeys.purgeExpired(), 1);
    assert.equal(await store.apiKeys.get(shortLived.keyId), null, "the key row is hard-deleted");
    const rows = await sql.query("SELECT 1 FROM playground_keys WHERE key_id = $1", [shortLived.keyId]);
    assert.equal(rows.length, 0, "the one-time state goes with it");
    assert.ok(await store.generations.get("req_from_playground", workspace.id), "usage records stay");
    assert.ok(await store.apiKeys.get(longLived.keyId), "unexpired keys stay");
    assert.ok(await store.apiKeys.get(regular.key.id), "ordinary keys are never purged");
    assert.equal(await store.playgroundKeys.purgeExpired(), 0);
  },
);

forEachStorageMode(
  "playground keys: minting is limited per user, also under concurrency",
  async ({ store }) => {
    const workspace = await store.workspaces.create({ name: "W", creditsMicroUsd: 1_000, invoicing: false });
    const mint = (userId: string) =>
      store.playgroundKeys.mint({
        workspaceId: workspace.id,
        userId,
        source: "playground",
        ttlMs: MINUTE,
        limit: 3,
        windowMs: MINUTE,
      });
    const results = await Promise.all(Array.from({ length: 10 }, () => mint("busy-user")));
    const minted = results.filter((result) => !("rateLimited" in result));
    assert.equal(minted.length, 3);
    for (const result of results) {
      if (!("rateLimited" in result)) continue;
      assert.ok(
        result.retryAfterSeconds >= 1 && result.retryAfterSeconds <= 60,
        String(result.retryAfterSeconds),
      );
    }
    assertMinted(await mint("other-user"));
  },
);

forEachStorageMode(
  "playground keys: unknown workspace is an invalid_request naming workspace_id",
  async ({ store }) => {
    const error = await store.playgroundKeys
      .mint({
        workspaceId: "ws_nope",
        userId: "u",
        source: "playground",
        ttlMs: MINUTE,
        limit: 3,
        windowMs: MINUTE,
      })
      .catch((thrown: unknown) => thrown);
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, "invalid_request");
    assert.equal(error.param, "workspace_id");
  },
);
