// Tests src/http/routes/admin-routes.ts (kept here, beside the service it exposes).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RouteServer, startRouteServer } from "../../test/helpers/route-server.js";
import { createTestStore, type TestStore } from "../../test/helpers/storage-modes.js";
import { hashApiKey } from "../auth/api-key.js";
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import { createAdminRoutes } from "../http/routes/admin-routes.js";
import { openSharedState } from "../storage/shared-state/shared-state.js";
import type { SharedState } from "../storage/store.js";
import { createAdminService } from "./admin-service.js";

const SECRET = "test-internal-secret";
let context: TestStore;
let state: SharedState;
let server: RouteServer;

before(async () => {
  context = await createTestStore("embedded");
  state = await openSharedState({});
  server = await startRouteServer(
    createAdminRoutes(createAdminService({ store: context.store, state }), SECRET),
  );
});
after(async () => {
  await server.close();
  await state.close();
  await context.cleanup();
});

async function call(method: string, path: string, body?: unknown, token: string | null = SECRET) {
  const headers: Record<string, string> = {};
  if (token !== null) headers["X-Internal-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${server.url}/internal/admin${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response JSON
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

test("admin routes require the internal token", async () => {
  for (const token of [null, "", "wrong", `${SECRET}x`, SECRET.slice(0, -1)]) {
    const { status, body } = await call("POST", "/workspaces", { name: "x" }, token);
    assert.equal(status, 401, `token ${token}`);
    assert.equal(body.error.code, "invalid_api_key");
    assert.equal(body.error.type, "authentication_error");
  }
  assert.equal((await call("GET", "/keys?workspace_id=x", undefined, null)).status, 401);
  assert.equal(await context.store.workspaces.count(), 0, "nothing was created without the token");
});

test("an empty configured secret disables the admin API", async () => {
  const locked = await startRouteServer(
    createAdminRoutes(createAdminService({ store: context.store, state }), ""),
  );
  const response = await fetch(`${locked.url}/internal/admin/keys?workspace_id=x`, {
    headers: { "X-Internal-Token": "" },
  });
  await locked.close();
  assert.equal(response.status, 401);
});

test("workspace routes: create, credit, update", async () => {
  const created = await call("POST", "/workspaces", {
    name: "Acme",
    credits_usd: "3000.000001",
    invoicing: false,
  });
  assert.equal(created.status, 201);
  const workspace = created.body.workspace;
  assert.match(workspace.id, /^ws_/);
  assert.deepEqual(
    { ...workspace, id: "", created_at: "" },
    {
      id: "",
      name: "Acme",
      balance_usd: 3000.000001,
      balance_micro_usd: "3000000001",
      invoicing: false,
      locked: false,
      created_at: "",
      response_cache_ttl_seconds: null,
    },
  );
  assert.ok(!Number.isNaN(Date.parse(workspace.created_at)));

  const credited = await call("POST", `/workspaces/${workspace.id}/credit`, { usd: 0.5 });
  assert.equal(credited.status, 200);
  assert.equal(credited.body.workspace.balance_micro_usd, "3000500001");

  const updated = await call("PATCH", `/workspaces/${workspace.id}`, { locked: true });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.workspace.locked, true);
  assert.equal(updated.body.workspace.invoicing, false);

  const unknown = await call("POST", "/workspaces/ws_missing/credit", { usd: "1" });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.code, "invalid_request");
  assert.match(unknown.body.error.message, /Unknown workspace "ws_missing"/);
});

test("workspace routes validate bodies", async () => {
  const cases: Array<[string, string, unknown, RegExp]> = [
    ["POST", "/workspaces", {}, /name/],
    ["POST", "/workspaces", { name: "x", credits_usd: "-1" }, /negative/],
    ["POST", "/workspaces", { name: "x", credits_usd: "0.0000001" }, /6 decimals/],
    ["POST", "/workspaces", { name: "x", extra: 1 }, /extra/],
    ["POST", "/workspaces", "{not json", /not valid JSON/],
    ["POST", "/workspaces", { name: "x", invoicing: "yes" }, /invoicing/],
    ["PATCH", "/workspaces/ws_x", {}, /Nothing to update/],
  ];
  for (const [method, path, body, pattern] of cases) {
    const { status, body: response } = await call(method, path, body);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(response.error.code, "invalid_request");
    assert.match(response.error.message, pattern);
  }
});

test("an unknown body field is named in param", async () => {
  for (const [method, path, body, field] of [
    ["POST", "/workspaces", { name: "x", extra: 1 }, "extra"],
    ["POST", "/workspaces", JSON.parse('{"name":"x","__proto__":""}'), "__proto__"],
    ["PATCH", "/keys/key_x", { actor: "a", daily: 1 }, "daily"],
  ] as const) {
    const { status, body: response } = await call(method, path, body);
    assert.equal(status, 400);
    assert.equal(response.error.param, field, JSON.stringify(body));
    assert.match(response.error.message, new RegExp(`^${field}: unknown field`));
  }
});

test("a field inside a list is named as the other endpoints name it: models[1]", async () => {
  const { body } = await call("POST", "/keys", { workspace_id: "ws_x", models: ["a/b", 7] });
  assert.equal(body.error.param, "models[1]");
  assert.match(body.error.message, /^models\[1\]: /);
});

test("key routes: create, list, disable, enable, revoke", async () => {
  const announced: string[] = [];
  await state.subscribe(KEY_CHANGED_CHANNEL, (message) => announced.push(message));
  const { body: workspaceBody } = await call("POST", "/workspaces", { name: "Keys" });
  const workspaceId = workspaceBody.workspace.id;

  const created = await call("POST", "/keys", {
    workspace_id: workspaceId,
    name: "ci",
    models: ["openai/gpt-4o"],
    expires_at: "2099-01-01T00:00:00Z",
    member_id: "user_1",
  });
  assert.equal(created.status, 201);
  const { key, secret } = created.body;
  assert.match(secret, /^hi-/);
  assert.deepEqual(Object.keys(key).sort(), [
    "created_at",
    "display",
    "expires_at",
    "id",
    "member_id",
    "models",
    "name",
    "response_cache_ttl_seconds",
    "source",
    "status",
    "workspace_id",
  ]);
  assert.equal(key.display, `hi-…${secret.slice(-4)}`);
  assert.equal(key.expires_at, "2099-01-01T00:00:00.000Z");
  assert.deepEqual(key.models, ["openai/gpt-4o"]);
  assert.equal(key.status, "active");
  assert.ok((await context.store.apiKeys.findByHash(hashApiKey(secret))) !== null);

  const plain = await call("POST", "/keys", { workspace_id: workspaceId });
  assert.equal(plain.status, 201);
  assert.equal(plain.body.key.models, null);
  assert.equal(plain.body.key.expires_at, null);

  const listed = await call("GET", `/keys?workspace_id=${workspaceId}`);
  assert.equal(listed.status, 200);
  assert.deepEqual(
    listed.body.data.map((each: { id: string }) => each.id),
    [key.id, plain.body.key.id],
  );
  assert.ok(!JSON.stringify(listed.body).includes(secret));
  assert.ok(!JSON.stringify(listed.body).includes(hashApiKey(secret)));

  for (const [action, status] of [
    ["disable", "disabled"],
    ["enable", "active"],
    ["revoke", "revoked"],
  ]) {
    const changed = await call("POST", `/keys/${key.id}/${action}`);
    assert.equal(changed.status, 200, action);
    assert.equal(changed.body.key.status, status);
  }
  const reenable = await call("POST", `/keys/${key.id}/enable`);
  assert.equal(reenable.status, 400);
  assert.match(reenable.body.error.message, /revocation is final/);
  await new Promise((resolve) => setImmediate(resolve));
  // Only this key's changes (the workspace test before announces its workspace change too).
  assert.equal(announced.filter((message) => message.includes(key.id)).length, 3);

  assert.equal((await call("POST", "/keys/key_missing/disable")).status, 400);
  assert.equal((await call("POST", `/keys/${key.id}/explode`)).status, 404);
  assert.equal((await call("GET", "/keys")).body.error.param, "workspace_id");
  assert.equal((await call("GET", "/keys?workspace_id=ws_missing")).status, 400);
});

test("key routes validate bodies", async () => {
  const { body: workspaceBody } = await call("POST", "/workspaces", { name: "V" });
  const workspaceId = workspaceBody.workspace.id;
  const cases: Array<[unknown, RegExp]> = [
    [{}, /workspace_id/],
    [{ workspace_id: workspaceId, expires_at: "next week" }, /ISO-8601/],
    [{ workspace_id: workspaceId, expires_at: "2001-01-01" }, /in the future/],
    [{ workspace_id: workspaceId, models: "openai/gpt-4o" }, /models/],
    [{ workspace_id: workspaceId, models: ["gpt"] }, /creator\/model/],
    [{ workspace_id: "ws_missing" }, /Unknown workspace/],
  ];
  for (const [body, pattern] of cases) {
    const response = await call("POST", "/keys", body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.match(response.body.error.message, pattern);
  }
});
