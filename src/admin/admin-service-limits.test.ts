import assert from "node:assert/strict";
import { forEachStorageMode } from "../../test/helpers/storage-modes.js";
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import { GatewayError } from "../errors/gateway-error.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import { createAdminService } from "./admin-service.js";

function isInvalidRequest(pattern: RegExp, param?: string) {
  return (error: unknown) =>
    error instanceof GatewayError &&
    error.code === "invalid_request" &&
    pattern.test(error.message) &&
    (param === undefined || error.param === param);
}

forEachStorageMode(
  "admin service: key limits, validated, audit-logged, on the limits' clock",
  async ({ store }) => {
    const state = await openSharedState({});
    const announced: string[] = [];
    await state.subscribe(KEY_CHANGED_CHANNEL, (message) => announced.push(message));
    const forgotten: string[] = [];
    const clock = Date.parse("2026-05-21T12:34:56.789Z");
    const admin = createAdminService({
      store,
      state,
      spendGuard: { now: async () => clock, forgetBalance: async (id) => void forgotten.push(id) },
    });
    const workspace = await admin.createWorkspace({ name: "W", creditsUsd: "1" });

    const { key, limits } = await admin.createKey({
      workspaceId: workspace.id,
      dailyLimitUsd: "0.5",
      totalLimitUsd: 0,
      requestsPerMinute: 30,
    });
    assert.deepEqual(limits, {
      dailyMicroUsd: 500_000,
      monthlyMicroUsd: null,
      totalMicroUsd: 0,
      requestsPerMinute: 30,
      totalResetAt: null,
    });
    assert.deepEqual((await admin.getKey(key.id)).limits, limits);

    const updated = await admin.updateKey(key.id, {
      monthlyLimitUsd: "12.000001",
      dailyLimitUsd: null,
      actor: "eve",
    });
    assert.equal(updated.limits.monthlyMicroUsd, 12_000_001);
    assert.equal(updated.limits.dailyMicroUsd, null);
    assert.equal(updated.limits.requestsPerMinute, 30);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(announced.includes(JSON.stringify({ keyId: key.id })), "caches drop the key (allowlist)");

    await assert.rejects(admin.updateKey(key.id, {}), isInvalidRequest(/Nothing to update/));
    await assert.rejects(
      admin.updateKey(key.id, { requestsPerMinute: 0 }),
      isInvalidRequest(/from 1 to/, "requests_per_minute"),
    );
    await assert.rejects(
      admin.updateKey(key.id, { requestsPerMinute: 2.5 }),
      isInvalidRequest(/integer/, "requests_per_minute"),
    );
    await assert.rejects(
      admin.createKey({ workspaceId: workspace.id, totalLimitUsd: "-3" }),
      isInvalidRequest(/negative/, "total_limit_usd"),
    );
    await assert.rejects(
      admin.updateKey(key.id, { dailyLimitUsd: "0.0000001" }),
      isInvalidRequest(/6 decimals/, "daily_limit_usd"),
    );
    await assert.rejects(
      admin.updateKey(key.id, { models: [] }),
      isInvalidRequest(/must not be empty/, "models"),
    );

    await assert.rejects(
      admin.resetKeyTotal(key.id, " "),
      isInvalidRequest(/actor must not be empty/, "actor"),
    );
    const reset = await admin.resetKeyTotal(key.id, "frank");
    assert.equal(reset.resetAt.getTime(), clock, "the new window opens at the limits' clock");
    assert.equal(reset.previousSpendMicroUsd, 0);
    // The key's creation has its own entry (key.created); these are its changes.
    const audit = (await store.keyLimits.listAudit({ apiKeyId: key.id })).filter(
      (entry) => entry.action !== "key.created",
    );
    assert.deepEqual(
      audit.map((entry) => [entry.action, entry.actor]),
      [
        ["key.total_reset", "frank"],
        ["key.limits_updated", "eve"],
      ],
    );
    await assert.rejects(admin.resetKeyTotal("key_missing", "frank"), isInvalidRequest(/Unknown API key/));

    await admin.creditWorkspace(workspace.id, "2");
    assert.deepEqual(forgotten, [workspace.id], "a credit drops the balance counter");
  },
);
