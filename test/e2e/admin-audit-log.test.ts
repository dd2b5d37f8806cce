/**
 * Every mutating admin route writes one audit-log entry: the test reads the list of operations
 * from the gateway's own /openapi.json (every non-GET under /internal/admin), calls each one as an
 * operator would, and reads the newest entry of GET /internal/admin/audit-log after each: its
 * action, actor, workspace and key, and before/after where the change has a before. A new mutating
 * route without an entry here fails the first assertion.
 */
import assert from "node:assert/strict";
import { forEachGatewayMode, type TestGateway } from "../helpers/test-gateway.js";

interface Entry {
  action: string;
  actor: string;
  workspace_id: string;
  api_key_id: string | null;
  details: { before?: Record<string, unknown>; after?: Record<string, unknown> };
}

async function admin(context: TestGateway, method: string, path: string, body?: unknown) {
  const response = await fetch(`${context.url}/internal/admin${path}`, {
    method,
    headers: { "x-internal-token": context.internalSecret, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the admin answers of several shapes, read field by field
  const json = (await response.json()) as Record<string, any>;
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function newestEntry(context: TestGateway): Promise<Entry> {
  const page = await admin(context, "GET", "/audit-log?limit=1");
  return page.data[0] as Entry;
}

forEachGatewayMode(
  "every mutating admin route writes an audit entry: who, what, target, before/after",
  async (context) => {
    const document = (await (await fetch(`${context.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const mutating = Object.entries(document.paths)
      .filter(([path]) => path.startsWith("/internal/admin/"))
      .flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => method !== "get")
          .map((method) => `${method.toUpperCase()} ${path.slice("/internal/admin".length)}`),
      )
      .sort();

    const ws = await admin(context, "POST", "/workspaces", {
      name: "audited",
      credits_usd: "3",
      actor: "ann",
    });
    const workspaceId = ws.workspace.id as string;
    const created = await admin(context, "POST", "/keys", { workspace_id: workspaceId, actor: "ann" });
    const keyId = created.key.id as string;
    // Each operation: its call, then the entry it must have written (null target: the workspace's).
    const walk: Record<
      string,
      { call: () => Promise<unknown>; action: string; key: boolean; actor: string; before: boolean }
    > = {
      "POST /workspaces": {
        call: async () => ws,
        action: "workspace.created",
        key: false,
        actor: "ann",
        before: false,
      },
      "POST /keys": {
        call: async () => created,
        action: "key.created",
        key: true,
        actor: "ann",
        before: false,
      },
      "POST /workspaces/{id}/credit": {
        call: () => admin(context, "POST", `/workspaces/${workspaceId}/credit`, { usd: "2", actor: "bob" }),
        action: "workspace.credited",
        key: false,
        actor: "bob",
        before: true,
      },
      "PATCH /workspaces/{id}": {
        call: () => admin(context, "PATCH", `/workspaces/${workspaceId}`, { locked: true, actor: "bob" }),
        action: "workspace.updated",
        key: false,
        actor: "bob",
        before: true,
      },
      "PATCH /keys/{id}": {
        call: () => admin(context, "PATCH", `/keys/${keyId}`, { daily_limit_usd: "1", actor: "cy" }),
        action: "key.limits_updated",
        key: true,
        actor: "cy",
        before: true,
      },
      "POST /keys/{id}/reset-total": {
        call: () => admin(context, "POST", `/keys/${keyId}/reset-total`, { actor: "cy" }),
        action: "key.total_reset",
        key: true,
        actor: "cy",
        before: false,
      },
      "PATCH /keys/{id}/alert-thresholds": {
        call: () => admin(context, "PATCH", `/keys/${keyId}/alert-thresholds`, { thresholds: [50, 100] }),
        action: "key.alert_thresholds_updated",
        key: true,
        actor: "admin",
        before: true,
      },
      "PATCH /workspaces/{id}/alert-webhook": {
        call: () => admin(context, "PATCH", `/workspaces/${workspaceId}/alert-webhook`, { url: null }),
        action: "workspace.alert_webhook_updated",
        key: false,
        actor: "admin",
        before: true,
      },
      "POST /playground-keys": {
        call: () =>
          admin(context, "POST", "/playground-keys", { workspace_id: workspaceId, operator: "dee" }),
        action: "key.playground_minted",
        key: true,
        actor: "dee",
        before: false,
      },
    };
    for (const status of ["disable", "enable", "revoke"]) {
      walk[`POST /keys/{id}/${status}`] = {
        call: () => admin(context, "POST", `/keys/${keyId}/${status}`),
        action: "key.status_changed",
        key: true,
        actor: "admin",
        before: true,
      };
    }
    assert.deepEqual(mutating, Object.keys(walk).sort(), "every mutating admin route is walked");

    // Creation entries were written before the walk; read them from the log's history.
    const history = (await admin(context, "GET", `/audit-log?workspace_id=${workspaceId}&limit=10`))
      .data as Entry[];
    assert.deepEqual(history.map((entry) => entry.action).reverse(), ["workspace.created", "key.created"]);
    for (const [operation, step] of Object.entries(walk)) {
      if (operation === "POST /workspaces" || operation === "POST /keys") continue;
      await step.call();
      const entry = await newestEntry(context);
      assert.equal(entry.action, step.action, operation);
      assert.equal(entry.actor, step.actor, operation);
      assert.equal(entry.workspace_id, workspaceId, operation);
      // The minted playground key is a key of its own.
      if (operation === "POST /playground-keys") assert.ok(entry.api_key_id, operation);
      else assert.equal(entry.api_key_id, step.key ? keyId : null, operation);
      if (step.before)
        assert.ok(entry.details.before !== undefined && entry.details.after !== undefined, operation);
    }
  },
);
