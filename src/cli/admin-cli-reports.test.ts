// The admin CLI's reports as a child process: `key show` with spend per window, `key spend`,
// `workspace usage` and `requests`, through a running gateway's admin API (its real routes over a
// real store) and, for what can be read without a gateway, with the database opened directly.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { findClosedPort, runAdminCli } from "../../test/helpers/admin-cli.js";
import { createTestOutcome, createTestStart } from "../../test/helpers/generation-records.js";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import {
  createTestDatabase,
  createTestStore,
  requireMode,
  type TestStore,
} from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAdminActivityRoutes } from "../http/routes/admin-activity-routes.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { createAdminUsageRoutes } from "../http/routes/admin-usage-routes.js";
import { openStore } from "../storage/open-store.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import type { Store } from "../storage/store.js";

/** A key with a daily limit of $1 and two settled requests today: $0.25 and $0.000125. */
async function seedSpend(store: Store) {
  const workspace = await store.workspaces.create({
    name: "Reports",
    creditsMicroUsd: 9_000_000,
    invoicing: false,
  });
  const { key } = await store.apiKeys.create({
    workspaceId: workspace.id,
    name: "ci",
    limits: { dailyMicroUsd: 1_000_000 },
  });
  const identity = { workspaceId: workspace.id, apiKeyId: key.id };
  const now = Date.now();
  for (const [id, cost, model] of [
    ["gen-report-1", 250_000, "openai/gpt-4o"],
    ["gen-report-2", 125, "anthropic/claude-x"],
  ] as const) {
    await store.generations.start(
      createTestStart({ id, ...identity }, { model, createdAt: new Date(now - 60_000) }),
    );
    await store.generations.finish(
      id,
      createTestOutcome({ costMicroUsd: cost, tokensPrompt: 100, tokensCompletion: 20 }),
    );
  }
  return { workspaceId: workspace.id, keyId: key.id };
}

describe("admin CLI reports through a running gateway's admin API", () => {
  let context: TestStore;
  let server: RouteServer;
  let env: Record<string, string>;
  let seeded: { workspaceId: string; keyId: string };
  const secret = "cli-reports-secret";

  before(async () => {
    context = await createTestStore("embedded");
    const admin = createAdminService({ store: context.store, state: await openSharedState({}) });
    server = await startRouteServer([
      ...createAdminRoutes(admin, secret),
      ...createAdminUsageRoutes({
        store: context.store,
        // 5,000 micro-USD held by a request in flight.
        spendGuard: {
          now: async () => Date.now(),
          readReserved: async () => ({ keyMicroUsd: 5_000, workspaceMicroUsd: 5_000 }),
        },
        internalSecret: secret,
        defaultRequestsPerMinute: 600,
      }),
      ...createAdminActivityRoutes({ store: context.store, internalSecret: secret }),
    ]);
    env = { GATEWAY_URL: server.url, INTERNAL_SHARED_SECRET: secret };
    seeded = await seedSpend(context.store);
  });
  after(async () => {
    await server.close();
    await context.cleanup();
  });

  test("key show prints the spend per window; --json carries it as the admin API serves it", async () => {
    const text = await runAdminCli(["key", "show", seeded.keyId], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /daily spend\s+\$0\.250125 spent, \$0\.005 in flight; limit \$1, \$0\.744875 left \(since \S+; resets \S+\)/,
    );
    assert.match(text.stdout, /monthly spend\s+\$0\.250125 spent, \$0\.005 in flight; no limit/);
    assert.match(text.stdout, /total spend\s+\$0\.250125 spent, .*never resets by itself/);
    const json = JSON.parse((await runAdminCli(["--json", "key", "show", seeded.keyId], env)).stdout);
    assert.equal(json.key.id, seeded.keyId);
    assert.equal(json.limits.daily_limit_micro_usd, "1000000");
    assert.equal(json.spend.daily.spent_micro_usd, "250125");
    assert.equal(json.spend.daily.remaining_micro_usd, "744875");
  });

  test("key spend: windows, rate limit and balance; --json is the admin API's document", async () => {
    const text = await runAdminCli(["key", "spend", seeded.keyId], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /rate limit\s+600 per minute \(default\)/);
    assert.match(text.stdout, /balance\s+\$8\.749875, \$0\.005 in flight/);
    const json = JSON.parse((await runAdminCli(["--json", "key", "spend", seeded.keyId], env)).stdout);
    const served = await fetch(`${server.url}/internal/admin/keys/${seeded.keyId}/spend`, {
      headers: { "X-Internal-Token": secret },
    }).then((response) => response.json());
    // Window starts are computed per call; everything else is the same document.
    assert.deepEqual(json, served);
    const unknown = await runAdminCli(["--json", "key", "spend", "key_missing"], env);
    assert.equal(unknown.code, 1);
    assert.equal(JSON.parse(unknown.stdout).error.param, "id");
  });

  test("workspace usage per day and model, with --days checked before anything connects", async () => {
    const text = await runAdminCli(["workspace", "usage", seeded.workspaceId, "--days", "2"], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /DAY\s+MODEL\s+REQUESTS\s+PROMPT\s+COMPLETION\s+COST/);
    assert.match(text.stdout, /anthropic\/claude-x\s+1\s+100\s+20\s+\$0\.000125/);
    assert.match(text.stdout, /openai\/gpt-4o\s+1\s+100\s+20\s+\$0\.25\n/);
    assert.match(text.stdout, /2 requests, \$0\.250125 in all/);
    const json = JSON.parse(
      (await runAdminCli(["--json", "workspace", "usage", seeded.workspaceId], env)).stdout,
    );
    assert.equal(json.days, 30);
    assert.deepEqual(
      json.data.map((row: { model: string; cost_micro_usd: string }) => [row.model, row.cost_micro_usd]),
      [
        ["anthropic/claude-x", "125"],
        ["openai/gpt-4o", "250000"],
      ],
    );
    const bad = await runAdminCli(["workspace", "usage", seeded.workspaceId, "--days", "91"], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--days must be from 1 to 90/);
    assert.doesNotMatch(bad.stderr, /using/, "refused before connecting");
  });

  test("requests: newest first, filtered by key, limited; --json is the admin API's list", async () => {
    const text = await runAdminCli(["requests", "--workspace", seeded.workspaceId], env);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trim().split("\n");
    assert.match(lines[0], /^ID\s+CREATED\s+KEY\s+MODEL\s+STATUS\s+PROMPT\s+COMPLETION\s+COST\s+LATENCY$/);
    assert.match(lines[1], /^gen-report-2\s.*anthropic\/claude-x\s+ok\s+100\s+20\s+\$0\.000125/);
    assert.match(lines[2], /^gen-report-1\s.*openai\/gpt-4o\s+ok\s+100\s+20\s+\$0\.25\s/);
    const limited = JSON.parse(
      (
        await runAdminCli(
          ["--json", "requests", "--workspace", seeded.workspaceId, "--key", seeded.keyId, "--limit", "1"],
          env,
        )
      ).stdout,
    );
    assert.deepEqual(
      limited.data.map((request: { id: string }) => request.id),
      ["gen-report-2"],
    );
    const otherKey = JSON.parse(
      (
        await runAdminCli(
          ["--json", "requests", "--workspace", seeded.workspaceId, "--key", "key_other"],
          env,
        )
      ).stdout,
    );
    assert.deepEqual(otherKey.data, []);
    const missing = await runAdminCli(["requests"], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--workspace is required/);
  });
});

test("admin CLI reports with the database opened directly: spend and usage; requests need a gateway", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  const store = await openStore({ databaseUrl: database.url, dataDir: "/nonexistent" });
  try {
    const seeded = await seedSpend(store);
    const env = {
      GATEWAY_URL: `http://127.0.0.1:${await findClosedPort()}`,
      DATABASE_URL: database.url,
      GATEWAY_DATA_DIR: "/nonexistent/not-used-with-postgres",
    };
    const shown = await runAdminCli(["key", "show", seeded.keyId], env);
    assert.equal(shown.code, 0, shown.stderr);
    // Without REDIS_URL what requests in flight hold is unknown to the CLI.
    assert.match(
      shown.stdout,
      /daily spend\s+\$0\.250125 spent, unknown in flight; limit \$1, \$0\.749875 left/,
    );
    const usage = JSON.parse(
      (await runAdminCli(["--json", "workspace", "usage", seeded.workspaceId], env)).stdout,
    );
    assert.equal(usage.data.length, 2);
    const requests = await runAdminCli(["requests", "--workspace", seeded.workspaceId], env);
    assert.equal(requests.code, 1);
    assert.match(requests.stderr, /needs? a running gateway|running gateway's admin API/);
  } finally {
    await store.close();
    await database.drop();
  }
});
