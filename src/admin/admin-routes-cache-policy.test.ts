// Tests the response-cache policy fields of src/http/routes/admin-routes.ts: key create and
// update, workspace update; validated against the configured maximum and naming the field; null
// clears; a key change is audit-logged and announced; the route table documents the field.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import { createTestStore, type TestStore } from "../../test/helpers/storage-modes.js";
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import type { SharedState } from "../storage/store.js";
import { createAdminService } from "./admin-service.js";

const SECRET = "test-internal-secret";
const MAX_TTL = 3_600;
let context: TestStore;
let state: SharedState;
let server: RouteServer;

before(async () => {
  context = await createTestStore("embedded");
  state = await openSharedState({});
  const admin = createAdminService({ store: context.store, state, maxCacheTtlSeconds: MAX_TTL });
  server = await startRouteServer(createAdminRoutes(admin, SECRET));
});
after(async () => {
  await server.close();
  await state.close();
  await context.cleanup();
});

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}/internal/admin${path}`, {
    method,
    headers: { "X-Internal-Token": SECRET, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response JSON
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

test("a key's policy is set on create, changed, cleared with null, shown and audit-logged", async () => {
  const workspaceId = (await call("POST", "/workspaces", { name: "P" })).body.workspace.id;
  const created = await call("POST", "/keys", { workspace_id: workspaceId, response_cache_ttl_seconds: 120 });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const keyId = created.body.key.id;
  assert.equal(created.body.key.response_cache_ttl_seconds, 120);
  assert.equal((await call("GET", `/keys/${keyId}`)).body.key.response_cache_ttl_seconds, 120);

  const announced: string[] = [];
  const unsubscribe = await state.subscribe(KEY_CHANGED_CHANNEL, (message) => announced.push(message));
  const changed = await call("PATCH", `/keys/${keyId}`, {
    response_cache_ttl_seconds: MAX_TTL,
    actor: "ann",
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.equal(changed.body.key.response_cache_ttl_seconds, MAX_TTL);
  const untouched = await call("PATCH", `/keys/${keyId}`, { requests_per_minute: 10 });
  assert.equal(untouched.body.key.response_cache_ttl_seconds, MAX_TTL, "an absent field stays");
  const cleared = await call("PATCH", `/keys/${keyId}`, { response_cache_ttl_seconds: null });
  assert.equal(cleared.body.key.response_cache_ttl_seconds, null);
  await new Promise((resolve) => setTimeout(resolve, 50));
  unsubscribe();
  assert.equal(announced.filter((message) => message.includes(keyId)).length, 3, "every change is announced");

  // The key's creation has its own entry (key.created); these are its changes.
  const entries = (await context.store.keyLimits.listAudit({ apiKeyId: keyId })).filter(
    (entry) => entry.action !== "key.created",
  );
  const policy = (entry: (typeof entries)[number], side: "before" | "after") =>
    (entry.details as Record<string, Record<string, unknown>>)[side].response_cache_ttl_seconds;
  assert.deepEqual(
    entries.map((entry) => [entry.actor, policy(entry, "before"), policy(entry, "after")]),
    [
      ["admin", MAX_TTL, null],
      // A change that leaves the policy alone does not list it.
      ["admin", undefined, undefined],
      ["ann", 120, MAX_TTL],
    ],
  );
});

test("a workspace's policy is set, left alone by other changes and cleared with null", async () => {
  const workspaceId = (await call("POST", "/workspaces", { name: "W" })).body.workspace.id;
  assert.equal(
    (await call("GET", `/workspaces/${workspaceId}`)).body.workspace.response_cache_ttl_seconds,
    null,
  );
  const set = await call("PATCH", `/workspaces/${workspaceId}`, { response_cache_ttl_seconds: 30 });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.workspace.response_cache_ttl_seconds, 30);
  const locked = await call("PATCH", `/workspaces/${workspaceId}`, { locked: true });
  assert.equal(locked.body.workspace.response_cache_ttl_seconds, 30);
  const listed = await call("GET", "/workspaces?name=W");
  assert.equal(listed.body.data[0].response_cache_ttl_seconds, 30);
  const cleared = await call("PATCH", `/workspaces/${workspaceId}`, { response_cache_ttl_seconds: null });
  assert.equal(cleared.body.workspace.response_cache_ttl_seconds, null);
  assert.equal(cleared.body.workspace.locked, true);
});

test("a bad policy is refused naming response_cache_ttl_seconds, before anything is written", async () => {
  const workspaceId = (await call("POST", "/workspaces", { name: "V" })).body.workspace.id;
  const keyId = (await call("POST", "/keys", { workspace_id: workspaceId })).body.key.id;
  for (const value of [0, -5, 1.5, MAX_TTL + 1, "60", true]) {
    for (const [method, path, body] of [
      ["POST", "/keys", { workspace_id: workspaceId, response_cache_ttl_seconds: value }],
      ["PATCH", `/keys/${keyId}`, { response_cache_ttl_seconds: value }],
      ["PATCH", `/workspaces/${workspaceId}`, { response_cache_ttl_seconds: value }],
    ] as const) {
      const { status, body: answer } = await call(method, path, body);
      const what = `${method} ${path} ${JSON.stringify(value)}`;
      assert.equal(status, 400, what);
      assert.equal(answer.error.code, "invalid_request", what);
      assert.equal(answer.error.param, "response_cache_ttl_seconds", what);
      if (typeof value === "number")
        assert.match(answer.error.message, new RegExp(`from 1 to ${MAX_TTL}`), what);
    }
  }
  const keys = await call("GET", `/keys?workspace_id=${workspaceId}`);
  assert.equal(keys.body.data.length, 1, "no key was created");
  assert.equal(keys.body.data[0].response_cache_ttl_seconds, null);
  assert.equal(
    (await call("GET", `/workspaces/${workspaceId}`)).body.workspace.response_cache_ttl_seconds,
    null,
  );
  assert.deepEqual(
    (await context.store.keyLimits.listAudit({ apiKeyId: keyId })).filter(
      (entry) => entry.action !== "key.created",
    ),
    [],
  );
});

test("the route table documents the field on the three bodies and the answers", () => {
  const routes = createAdminRoutes(createAdminService({ store: context.store, state }), SECRET);
  for (const [method, path] of [
    ["POST", "/internal/admin/keys"],
    ["PATCH", "/internal/admin/keys/{id}"],
    ["PATCH", "/internal/admin/workspaces/{id}"],
  ]) {
    const route = routes.find((candidate) => candidate.method === method && candidate.path === path);
    const body = route?.request?.body as { shape: Record<string, unknown> } | undefined;
    assert.ok(body?.shape.response_cache_ttl_seconds, `${method} ${path}`);
  }
});
