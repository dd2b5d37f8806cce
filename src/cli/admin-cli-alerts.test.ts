// The admin CLI's budget-alert settings as a child process: `key update --alert-thresholds` and
// `workspace alert-webhook`, through a running gateway's admin API (its real routes over a real
// store) and with the database opened directly; what the store holds afterwards is checked.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { findClosedPort, runAdminCli } from "../../test/helpers/admin-cli.js";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import {
  createTestDatabase,
  createTestStore,
  requireMode,
  type TestStore,
} from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAdminAlertRoutes } from "../http/routes/admin-alert-routes.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { openStore } from "../storage/open-store.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import type { Store } from "../storage/store.js";

async function seedKey(store: Store) {
  const workspace = await store.workspaces.create({ name: "Alerts", creditsMicroUsd: 0, invoicing: false });
  const { key } = await store.apiKeys.create({
    workspaceId: workspace.id,
    name: "ci",
    limits: { dailyMicroUsd: 1_000_000 },
  });
  return { workspaceId: workspace.id, keyId: key.id };
}

describe("admin CLI budget alerts through a running gateway's admin API", () => {
  let context: TestStore;
  let server: RouteServer;
  let env: Record<string, string>;
  let seeded: { workspaceId: string; keyId: string };
  const secret = "cli-alerts-secret";

  before(async () => {
    context = await createTestStore("embedded");
    const admin = createAdminService({ store: context.store, state: await openSharedState({}) });
    server = await startRouteServer([
      ...createAdminRoutes(admin, secret),
      ...createAdminAlertRoutes({
        store: context.store,
        internalSecret: secret,
        policy: { allowHttp: false, allowLoopback: true },
      }),
    ]);
    env = { GATEWAY_URL: server.url, INTERNAL_SHARED_SECRET: secret };
    seeded = await seedKey(context.store);
  });
  after(async () => {
    await server.close();
    await context.cleanup();
  });

  test("key update --alert-thresholds sets, shows and clears a key's thresholds", async () => {
    const text = await runAdminCli(["key", "update", seeded.keyId, "--alert-thresholds", "100,50%,80"], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Updated API key/);
    assert.match(text.stdout, /daily limit\s+\$1 /, "the key's limits are printed, unchanged");
    assert.match(text.stdout, /alert thresholds\s+50%, 80%, 100%\n/);
    assert.deepEqual(await context.store.alerts.getKeyThresholds(seeded.keyId), [50, 80, 100]);

    const both = JSON.parse(
      (
        await runAdminCli(
          ["--json", "key", "update", seeded.keyId, "--daily", "2", "--alert-thresholds", "90"],
          env,
        )
      ).stdout,
    );
    assert.deepEqual(both.alert_thresholds, [90]);
    assert.equal(both.limits.daily_limit_micro_usd, "2000000", "limits and thresholds in one command");

    const cleared = JSON.parse(
      (await runAdminCli(["--json", "key", "update", seeded.keyId, "--alert-thresholds", "none"], env))
        .stdout,
    );
    assert.equal(cleared.alert_thresholds, null);
    assert.equal(await context.store.alerts.getKeyThresholds(seeded.keyId), null);
  });

  test("bad thresholds: the form is refused before connecting, the range by the admin API", async () => {
    const form = await runAdminCli(["key", "update", seeded.keyId, "--alert-thresholds", "50,lots"], env);
    assert.equal(form.code, 1);
    assert.match(form.stderr, /--alert-thresholds must be whole percentages/);
    assert.doesNotMatch(form.stderr, /using/, "refused before connecting");
    const range = await runAdminCli(
      ["--json", "key", "update", seeded.keyId, "--alert-thresholds", "50,0"],
      env,
    );
    assert.equal(range.code, 1);
    const envelope = JSON.parse(range.stdout);
    assert.equal(envelope.error.param, "thresholds");
    assert.match(envelope.error.message, /0 is not a whole percentage from 1 to 1000/);
    const before = await context.store.alerts.getKeyThresholds(seeded.keyId);
    assert.equal(before, null, "nothing stored");
  });

  test("workspace alert-webhook sets the webhook, prints its secret once, shows and removes it", async () => {
    const url = "http://127.0.0.1:9/hooks/budget";
    const set = await runAdminCli(
      ["workspace", "alert-webhook", seeded.workspaceId, "--url", url, "--thresholds", "80,100"],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    const printed = /secret\s+(whsec_\S+)/.exec(set.stdout)?.[1];
    assert.ok(printed, set.stdout);
    assert.match(set.stdout, /thresholds\s+80%, 100%/);
    const stored = await context.store.alerts.getWebhook(seeded.workspaceId);
    assert.deepEqual(stored, { url, secret: printed, thresholds: [80, 100] });

    const shown = await runAdminCli(["workspace", "alert-webhook", seeded.workspaceId], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`url\\s+${url.replace(/[.:/]/g, "\\$&")}`));
    assert.doesNotMatch(shown.stdout, /whsec_/, "the secret is shown once");

    const again = JSON.parse(
      (await runAdminCli(["--json", "workspace", "alert-webhook", seeded.workspaceId, "--url", url], env))
        .stdout,
    );
    assert.match(again.secret, /^whsec_/);
    assert.notEqual(again.secret, printed, "setting it again replaces the secret");
    assert.equal(again.thresholds, null);

    const refused = await runAdminCli(
      ["--json", "workspace", "alert-webhook", seeded.workspaceId, "--url", "https://10.0.0.1/hook"],
      env,
    );
    assert.equal(refused.code, 1);
    assert.equal(JSON.parse(refused.stdout).error.param, "url");

    const removed = await runAdminCli(
      ["workspace", "alert-webhook", seeded.workspaceId, "--url", "none"],
      env,
    );
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /Removed the budget-alert webhook/);
    assert.equal(await context.store.alerts.getWebhook(seeded.workspaceId), null);

    const orphan = await runAdminCli(
      ["workspace", "alert-webhook", seeded.workspaceId, "--thresholds", "50"],
      env,
    );
    assert.equal(orphan.code, 1);
    assert.match(orphan.stderr, /--thresholds needs --url/);
  });
});

test("admin CLI budget alerts with the database opened directly [postgres]", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  const store = await openStore({ databaseUrl: database.url, dataDir: "/nonexistent" });
  try {
    const seeded = await seedKey(store);
    const env = {
      GATEWAY_URL: `http://127.0.0.1:${await findClosedPort()}`,
      DATABASE_URL: database.url,
      GATEWAY_DATA_DIR: "/nonexistent/not-used-with-postgres",
    };
    const thresholds = await runAdminCli(
      ["key", "update", seeded.keyId, "--alert-thresholds", "50,100"],
      env,
    );
    assert.equal(thresholds.code, 0, thresholds.stderr);
    assert.deepEqual(await store.alerts.getKeyThresholds(seeded.keyId), [50, 100]);
    const loopback = await runAdminCli(
      ["workspace", "alert-webhook", seeded.workspaceId, "--url", "http://127.0.0.1:9/hook"],
      env,
    );
    assert.equal(loopback.code, 1, "the outbound rules apply without a gateway too");
    assert.match(loopback.stderr, /url/);
    const set = JSON.parse(
      (
        await runAdminCli(
          [
            "--json",
            "workspace",
            "alert-webhook",
            seeded.workspaceId,
            "--url",
            "https://hooks.example.com/b",
          ],
          env,
        )
      ).stdout,
    );
    assert.equal((await store.alerts.getWebhook(seeded.workspaceId))?.secret, set.secret);
  } finally {
    await store.close();
    await database.drop();
  }
});
