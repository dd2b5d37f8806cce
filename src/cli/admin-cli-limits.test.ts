// The limit commands of the admin CLI as a child process (through the admin API, and direct): `key create --daily/--monthly/--total/
// --rpm`, `key update`, `key show`, `key reset-total --actor` (audit-logged), and a credit change
// dropping the gateways' balance counter in Redis.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { findClosedPort, runAdminCli } from "../../test/helpers/admin-cli.js";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import {
  createTestDatabase,
  createTestStore,
  requireMode,
  TEST_REDIS_URL,
  type TestStore,
} from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { createAdminUsageRoutes } from "../http/routes/admin-usage-routes.js";
import { LIMIT_KEYS } from "../limits/limit-counters.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";

describe("admin CLI: key limits, through a running gateway's admin API", () => {
  let context: TestStore;
  let server: RouteServer;
  let env: Record<string, string>;
  const secret = "cli-limits-secret";

  before(async () => {
    context = await createTestStore("embedded");
    const admin = createAdminService({ store: context.store, state: await openSharedState({}) });
    server = await startRouteServer([
      ...createAdminRoutes(admin, secret),
      // `key show` reads the key's spend too.
      ...createAdminUsageRoutes({
        store: context.store,
        spendGuard: { now: async () => Date.now(), readReserved: async () => null },
        internalSecret: secret,
        defaultRequestsPerMinute: null,
      }),
    ]);
    env = { GATEWAY_URL: server.url, INTERNAL_SHARED_SECRET: secret };
  });
  after(async () => {
    await server.close();
    await context.cleanup();
  });

  test("create with limits, update field by field, show, reset the total with an actor", async () => {
    const workspace = JSON.parse(
      (await runAdminCli(["--json", "workspace", "create", "--name", "Acme", "--credits", "5"], env)).stdout,
    ).workspace;
    const created = await runAdminCli(
      [
        "--json",
        "key",
        "create",
        "--workspace",
        workspace.id,
        "--daily",
        "5",
        "--monthly",
        "50.5",
        "--total",
        "100",
        "--rpm",
        "60",
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { key, limits } = JSON.parse(created.stdout);
    assert.deepEqual(limits, {
      daily_limit_usd: 5,
      daily_limit_micro_usd: "5000000",
      monthly_limit_usd: 50.5,
      monthly_limit_micro_usd: "50500000",
      total_limit_usd: 100,
      total_limit_micro_usd: "100000000",
      requests_per_minute: 60,
      total_reset_at: null,
    });

    const updated = await runAdminCli(
      [
        "--json",
        "key",
        "update",
        key.id,
        "--daily",
        "none",
        "--rpm",
        "none",
        "--models",
        "a/b,c/d",
        "--actor",
        "alice",
      ],
      env,
    );
    assert.equal(updated.code, 0, updated.stderr);
    const after = JSON.parse(updated.stdout);
    assert.equal(after.limits.daily_limit_usd, null);
    assert.equal(after.limits.requests_per_minute, null);
    assert.equal(after.limits.monthly_limit_micro_usd, "50500000", "untouched fields stay");
    assert.deepEqual(after.key.models, ["a/b", "c/d"]);

    const allModels = await runAdminCli(["--json", "key", "update", key.id, "--models", "all"], env);
    assert.equal(JSON.parse(allModels.stdout).key.models, null);

    const shown = await runAdminCli(["key", "show", key.id], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /daily limit\s+none/);
    assert.match(shown.stdout, /monthly limit\s+\$50\.5 \(50500000 micro-USD\)/);
    assert.match(shown.stdout, /total since\s+key creation/);
    assert.match(shown.stdout, /rpm\s+default/);
    assert.match(shown.stdout, /daily spend\s+\$0 spent, unknown in flight; no limit/);

    const withoutActor = await runAdminCli(["key", "reset-total", key.id], env);
    assert.equal(withoutActor.code, 1);
    assert.match(withoutActor.stderr, /--actor is required/);
    const reset = await runAdminCli(["--json", "key", "reset-total", key.id, "--actor", "bob"], env);
    assert.equal(reset.code, 0, reset.stderr);
    const resetJson = JSON.parse(reset.stdout);
    assert.equal(resetJson.previous_total_spend_micro_usd, "0");
    assert.equal(resetJson.limits.total_reset_at, resetJson.reset_at);
    const text = await runAdminCli(["key", "reset-total", key.id, "--actor", "carol"], env);
    assert.match(text.stdout, /previous total spend \$0 \(0 micro-USD\), new window from \S+; audit-logged/);

    // The audit log holds both resets, the two updates and the creation, with their actors.
    const entries = await context.store.keyLimits.listAudit({ apiKeyId: key.id });
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.actor]),
      [
        ["key.total_reset", "carol"],
        ["key.total_reset", "bob"],
        ["key.limits_updated", "admin"],
        ["key.limits_updated", "alice"],
        ["key.created", "admin"],
      ],
    );
  });

  test("bad values are refused before anything is written", async () => {
    for (const [args, pattern] of [
      [["key", "update", "key_x"], /Nothing to update/],
      [["key", "update", "key_x", "--rpm", "fast"], /--rpm must be a whole number/],
      [["key", "update", "key_x", "--daily=-1"], /daily_limit_usd .*must not be negative/],
      [["key", "update", "key_missing", "--total", "1"], /Unknown API key "key_missing"/],
    ] as const) {
      const result = await runAdminCli([...args], env);
      assert.equal(result.code, 1, args.join(" "));
      assert.match(result.stderr, pattern, args.join(" "));
    }
  });
});

test("admin CLI in direct mode with Redis: a credit drops the gateways' balance counter", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const database = await createTestDatabase();
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  let balanceKey: string | undefined;
  try {
    const env = {
      GATEWAY_URL: `http://127.0.0.1:${await findClosedPort()}`,
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      GATEWAY_DATA_DIR: "/nonexistent/not-used-with-postgres",
    };
    const created = await runAdminCli(
      ["--json", "workspace", "create", "--name", "W", "--credits", "1"],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { workspace } = JSON.parse(created.stdout);
    // What a gateway would have cached: the old balance.
    balanceKey = LIMIT_KEYS.balance(workspace.id);
    await redis.hset(balanceKey, "v", "1000000", "at", String(Date.now()));
    const credited = await runAdminCli(["workspace", "credit", workspace.id, "2"], env);
    assert.equal(credited.code, 0, credited.stderr);
    assert.equal(await redis.exists(balanceKey), 0, "the next request re-seeds it from the new balance");
  } finally {
    if (balanceKey) await redis.del(balanceKey);
    redis.disconnect();
    await database.drop();
  }
});
