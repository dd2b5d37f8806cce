import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestSharedState, createTestStore, requireMode } from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAuthenticator } from "../auth/authenticate.js";
import { evictBeforePublish } from "../auth/evict-before-publish.js";
import { createAdmissionSnapshots } from "./admission-snapshots.js";

/**
 * Admission reads no database per request, yet every admin change reaches it: on the changing
 * instance at once (evict before publish), on another instance through Redis pub/sub.
 */
test("admission snapshots: cached, and every admin change applies on this instance and its peers", async (t) => {
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
    readAdmission: (keyId: string) => {
      reads++;
      return context.store.keyLimits.readAdmission(keyId);
    },
  };
  const local = await createAdmissionSnapshots(counted, shared.state, { ttlMs: 30_000 });
  const peer = await createAdmissionSnapshots(counted, peerState, { ttlMs: 30_000 });
  const authenticator = await createAuthenticator(context.store, shared.state);
  t.after(async () => {
    await local.close();
    await peer.close();
    await authenticator.close();
  });
  const admin = createAdminService({
    store: context.store,
    state: evictBeforePublish(shared.state, authenticator, local),
  });
  const workspace = await admin.createWorkspace({ name: "W", creditsUsd: "1" });
  const { key } = await admin.createKey({ workspaceId: workspace.id });

  await local.read(key.id);
  await local.read(key.id);
  assert.equal(reads, 1, "the second read is served from memory");

  const waitForPeer = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 2_000;
    while (!(await check())) {
      assert.ok(Date.now() < deadline, "the peer never saw the change");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await peer.read(key.id);

  await admin.updateKey(key.id, { dailyLimitUsd: "0.5", models: ["x/y"] });
  assert.equal((await local.read(key.id))?.limits.dailyMicroUsd, 500_000, "applies here at once");
  assert.deepEqual((await local.read(key.id))?.allowedModels, ["x/y"]);
  await waitForPeer(async () => (await peer.read(key.id))?.limits.dailyMicroUsd === 500_000);

  await admin.updateWorkspace(workspace.id, { locked: true });
  assert.equal((await local.read(key.id))?.workspace.locked, true);
  await waitForPeer(async () => (await peer.read(key.id))?.workspace.locked === true);

  await admin.creditWorkspace(workspace.id, "2");
  assert.equal((await local.read(key.id))?.workspace.balanceMicroUsd, 3_000_000);
  await waitForPeer(async () => (await peer.read(key.id))?.workspace.balanceMicroUsd === 3_000_000);

  const resetAt = (await admin.resetKeyTotal(key.id, "ops")).limits.totalResetAt;
  assert.ok(resetAt);
  assert.equal((await local.read(key.id))?.limits.totalResetAt?.getTime(), resetAt.getTime());
});
