// `key update --expires <ISO-8601>|never` of the admin CLI as a child process, through a running
// gateway's admin API (PATCH /keys/{id} with expires_at) and on the database directly: it sets,
// moves and clears a key's expiry, audit-logged like the key's other changes; a date in the past
// or a malformed one is refused naming --expires / expires_at.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { findClosedPort, runAdminCli } from "../../test/helpers/admin-cli.js";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import {
  createTestDatabase,
  createTestStore,
  requireMode,
  type TestStore,
} from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";

const secret = "cli-expiry-secret";
let context: TestStore;
let server: RouteServer;

before(async () => {
  context = await createTestStore("embedded");
  const admin = createAdminService({ store: context.store, state: await openSharedState({}) });
  server = await startRouteServer(createAdminRoutes(admin, secret));
});
after(async () => {
  await server.close();
  await context.cleanup();
});

async function json(args: string[], env: Record<string, string>) {
  const result = await runAdminCli(["--json", ...args], env);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** Sets, moves and clears one key's expiry through `env`'s target; returns the key id. */
async function walkExpiry(env: Record<string, string>): Promise<string> {
  const { workspace } = await json(["workspace", "create", "--name", "Expiry", "--credits", "1"], env);
  const { key } = await json(["key", "create", "--workspace", workspace.id], env);
  assert.equal(key.expires_at, null);

  const set = await json(["key", "update", key.id, "--expires", "2099-01-31", "--actor", "ann"], env);
  assert.equal(set.key.expires_at, "2099-01-31T00:00:00.000Z");
  const moved = await runAdminCli(["key", "update", key.id, "--expires", "2099-02-01T12:30:00+02:00"], env);
  assert.equal(moved.code, 0, moved.stderr);
  assert.match(moved.stdout, /expires\s+2099-02-01T10:30:00\.000Z/);
  const cleared = await json(["key", "update", key.id, "--expires", "never"], env);
  assert.equal(cleared.key.expires_at, null);

  const past = await runAdminCli(["key", "update", key.id, "--expires", "2001-01-01"], env);
  assert.notEqual(past.code, 0);
  assert.match(past.stderr, /expires_at/);
  const malformed = await runAdminCli(["key", "update", key.id, "--expires", "next week"], env);
  assert.notEqual(malformed.code, 0);
  assert.match(malformed.stderr, /--expires must be an ISO-8601 date or date-time/);
  return key.id;
}

test("key update --expires through the admin API: set, moved, cleared with never, audit-logged", async () => {
  const keyId = await walkExpiry({ GATEWAY_URL: server.url, INTERNAL_SHARED_SECRET: secret });
  const rows = await context.sql.query<{ actor: string; details: Record<string, Record<string, unknown>> }>(
    "SELECT actor, details FROM audit_log WHERE api_key_id = $1 AND action = 'key.limits_updated' ORDER BY id",
    [keyId],
  );
  const expiries = rows.map((row) => [
    row.actor,
    row.details.before.expires_at,
    row.details.after.expires_at,
  ]);
  assert.deepEqual(expiries.slice(0, 3), [
    ["ann", null, "2099-01-31T00:00:00.000Z"],
    ["admin", "2099-01-31T00:00:00.000Z", "2099-02-01T10:30:00.000Z"],
    ["admin", "2099-02-01T10:30:00.000Z", null],
  ]);
});

test("key update --expires on the database directly", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  try {
    await walkExpiry({
      GATEWAY_URL: `http://127.0.0.1:${await findClosedPort()}`,
      DATABASE_URL: database.url,
      GATEWAY_DATA_DIR: "/nonexistent/not-used-with-postgres",
    });
  } finally {
    await database.drop();
  }
});
