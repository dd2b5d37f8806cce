import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestSharedState, createTestStore, requireMode } from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAuthenticator } from "./authenticate.js";
import { evictBeforePublish } from "./evict-before-publish.js";

/**
 * The authenticator's cache is the one cache of key state (key, workspace, limits): a request reads
 * no database, yet every admin change reaches it, on the changing instance at once (evict before
 * publish), on another instance through Redis pub/sub.
 */
test("key state: cached, and every admin change applies on this instance and its peers", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const context = await createTestStore("embedded");
  const shared = await createTestSharedState("redis");
  const peerState = await shared.openPeer();
  t.after(async () => {
    await shared.cleanup();
    await context.cleanup();
  });
  let reads = 0;
  const counted = {
    ...context.store,
    apiKeys: {
      ...context.store.apiKeys,
      findByHash: (hash: string) => {
        reads++;
        return context.store.apiKeys.findByHash(hash);
      },
    },
  };
  const local = await createAuthenticator(counted, shared.state, { cacheTtlMs: 30_000 });
  const peer = await createAuthenticator(counted, peerState, { cacheTtlMs: 30_000 });
  t.after(async () => {
    await local.close();
    await peer.close();
  });
  const admin = createAdminService({
    store: context.store,
    state: evictBeforePublish(shared.state, local),
  });
  const workspace = await admin.createWorkspace({ name: "W", creditsUsd: "1" });
  const { key, secret } = await admin.createKey({ workspaceId: workspace.id });

  await local.authenticate(secret);
  await local.authenticate(secret);
  assert.equal(reads, 1, "the second read is served from memory");

  const waitForPeer = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 2_000;
    while (!(await check())) {
      assert.ok(Date.now() < deadline, "the peer never saw the change");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await peer.authenticate(secret);

  await admin.updateKey(key.id, { dailyLimitUsd: "0.5", models: ["x/y"] });
  assert.equal((await local.authenticate(secret))?.limits.dailyMicroUsd, 500_000, "applies here at once");
  assert.deepEqual((await local.authenticate(secret))?.key.allowedModels, ["x/y"]);
  await waitForPeer(async () => (await peer.authenticate(secret))?.limits.dailyMicroUsd === 500_000);

  await admin.updateWorkspace(workspace.id, { locked: true });
  assert.equal((await local.authenticate(secret))?.workspace.locked, true);
  await waitForPeer(async () => (await peer.authenticate(secret))?.workspace.locked === true);

  await admin.creditWorkspace(workspace.id, "2");
  assert.equal((await local.authenticate(secret))?.workspace.balanceMicroUsd, 3_000_000);
  await waitForPeer(async () => (await peer.authenticate(secret))?.workspace.balanceMicroUsd === 3_000_000);

  const resetAt = (await admin.resetKeyTotal(key.id, "ops")).limits.totalResetAt;
  assert.ok(resetAt);
  assert.equal((await local.authenticate(secret))?.limits.totalResetAt?.getTime(), resetAt.getTime());
});
