// `--cache-ttl <seconds>|off` of the admin CLI as a child process, through a running gateway's
// admin API: key create, key update, workspace update; `off` clears; the text output names the
// policy; a bad value is refused before anything is sent.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { runAdminCli } from "../../test/helpers/admin-cli.js";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import { createTestStore, type TestStore } from "../../test/helpers/storage-modes.js";
import { createAdminService } from "../admin/admin-service.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";

const SECRET = "cli-cache-policy-secret";
let context: TestStore;
let server: RouteServer;
let env: Record<string, string>;

before(async () => {
  context = await createTestStore("embedded");
  const admin = createAdminService({ store: context.store, state: await openSharedState({}) });
  server = await startRouteServer(createAdminRoutes(admin, SECRET));
  env = { GATEWAY_URL: server.url, INTERNAL_SHARED_SECRET: SECRET };
});
after(async () => {
  await server.close();
  await context.cleanup();
});

test("--cache-ttl sets, changes and clears the policy of keys and workspaces", async () => {
  const workspace = JSON.parse(
    (await runAdminCli(["--json", "workspace", "create", "--name", "Acme"], env)).stdout,
  ).workspace;
  const setWorkspace = await runAdminCli(["workspace", "update", workspace.id, "--cache-ttl", "900"], env);
  assert.equal(setWorkspace.code, 0, setWorkspace.stderr);
  assert.match(setWorkspace.stdout, /cache policy\s+900 s for deterministic requests/);

  const created = await runAdminCli(
    ["--json", "key", "create", "--workspace", workspace.id, "--cache-ttl", "60"],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout).key;
  assert.equal(key.response_cache_ttl_seconds, 60);

  const updated = await runAdminCli(
    ["--json", "key", "update", key.id, "--cache-ttl", "120", "--actor", "ann"],
    env,
  );
  assert.equal(updated.code, 0, updated.stderr);
  assert.equal(JSON.parse(updated.stdout).key.response_cache_ttl_seconds, 120);
  const off = await runAdminCli(["key", "update", key.id, "--cache-ttl", "off"], env);
  assert.equal(off.code, 0, off.stderr);
  assert.match(off.stdout, /cache policy\s+workspace's/);
  assert.equal((await context.store.apiKeys.get(key.id))?.responseCacheTtlSeconds, null);

  const workspaceOff = await runAdminCli(
    ["--json", "workspace", "update", workspace.id, "--cache-ttl", "off"],
    env,
  );
  assert.equal(JSON.parse(workspaceOff.stdout).workspace.response_cache_ttl_seconds, null);
  assert.equal((await context.store.workspaces.get(workspace.id))?.responseCacheTtlSeconds, null);
});

test("a bad --cache-ttl is refused naming it", async () => {
  for (const [args, pattern] of [
    [
      ["key", "update", "key_x", "--cache-ttl", "soon"],
      /--cache-ttl must be a whole number of seconds or "off"/,
    ],
    [["workspace", "update", "ws_x", "--cache-ttl", "-1"], /cache-ttl/],
    [["key", "update", "key_x", "--cache-ttl", "0"], /response_cache_ttl_seconds must be a whole number/],
  ] as const) {
    const result = await runAdminCli([...args], env);
    assert.equal(result.code, 1, args.join(" "));
    assert.match(result.stderr, pattern, args.join(" "));
  }
});
