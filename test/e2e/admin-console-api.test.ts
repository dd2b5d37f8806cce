/**
 * The admin API routes of the console's key, audit and playground pages on a real gateway in both
 * runtime modes: every key's spend per window in one call, key edits (expiry included) that are
 * validated and audit-logged, the audit log paged by cursor, and one-time playground keys minted for
 * the console's operator (labelled `source=playground`, good for one request). Each answer matches
 * its schema in /openapi.json.
 */
import assert from "node:assert/strict";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { createOpenApiValidator } from "../helpers/openapi-schema-validator.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

// Test catalog: $2/M in, $8/M out; the fake upstream bills 10 in + 5 out = 60 µUSD per request.
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const REQUEST_COST = 60;

// biome-ignore lint/suspicious/noExplicitAny: wire bodies read field by field.
type Json = any;

async function callAdmin(
  context: TestGateway,
  method: string,
  path: string,
  body?: unknown,
  token = context.gateway.internalSecret,
) {
  const response = await fetch(`${context.url}/internal/admin${path}`, {
    method,
    headers: {
      "X-Internal-Token": token,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function chat(context: TestGateway, apiKey: string) {
  const response = await fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await response.json()) as Json;
  return { status: response.status, body, requestId: response.headers.get("x-request-id")! };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

forEachGatewayMode("admin API for the console's key, audit and playground pages", async (context, t) => {
  context.upstream.setHandler(() => fakeReply.json(buildChatCompletion({ usage: USAGE })));
  const validator = createOpenApiValidator(await (await fetch(`${context.url}/openapi.json`)).json());
  const assertDocumented = (schema: string, body: unknown) =>
    assert.deepEqual(validator.validate(schema, body), [], `${schema} in /openapi.json`);
  const { key, secret } = await context.admin.createKey({
    workspaceId: context.workspaceId,
    name: "spender",
    dailyLimitUsd: "1",
    totalLimitUsd: "5",
  });
  assert.equal((await chat(context, secret)).status, 200);
  assert.equal((await chat(context, secret)).status, 200);
  assert.equal((await chat(context, context.apiKey)).status, 200);

  await t.test("key spend: every key of the workspace with limits and spend per window", async () => {
    const body = await waitFor(async () => {
      const answer = await callAdmin(context, "GET", `/workspaces/${context.workspaceId}/key-spend`);
      assert.equal(answer.status, 200);
      const mine = answer.body.data.find((row: Json) => row.key_id === key.id);
      return mine?.spend.total.spent_micro_usd === String(2 * REQUEST_COST) ? answer.body : undefined;
    }, "both requests of the key counted");
    assertDocumented("AdminKeySpendList", body);
    assert.deepEqual(
      body.data.map((row: Json) => row.key_id),
      [context.keyId, key.id],
      "oldest first, every key of the workspace",
    );
    const mine = body.data[1];
    assert.equal(mine.limits.daily_limit_micro_usd, "1000000");
    assert.equal(mine.limits.total_limit_micro_usd, "5000000");
    assert.equal(mine.spend.daily.spent_micro_usd, String(2 * REQUEST_COST));
    assert.equal(mine.spend.monthly.spent_micro_usd, String(2 * REQUEST_COST));
    assert.equal(mine.spend.total.window_start, null);
    assert.equal(body.data[0].spend.daily.spent_micro_usd, String(REQUEST_COST));
    assert.ok(Date.parse(body.windows.daily.resets_at) > Date.now());

    // A total reset starts the total window over; today's spend stays.
    await callAdmin(context, "POST", `/keys/${key.id}/reset-total`, { actor: "carol" });
    const after = await callAdmin(context, "GET", `/workspaces/${context.workspaceId}/key-spend`);
    const reset = after.body.data.find((row: Json) => row.key_id === key.id);
    assert.equal(reset.spend.total.spent_micro_usd, "0");
    assert.equal(reset.spend.daily.spent_micro_usd, String(2 * REQUEST_COST));
    assert.ok(reset.spend.total.window_start);

    const unknown = await callAdmin(context, "GET", "/workspaces/ws_missing/key-spend");
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, "id");
    const refused = await callAdmin(
      context,
      "GET",
      `/workspaces/${context.workspaceId}/key-spend`,
      undefined,
      "x",
    );
    assert.equal(refused.status, 401);
  });

  await t.test("key update: expiry, limits and allowlist, validated and audit-logged", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const updated = await callAdmin(context, "PATCH", `/keys/${key.id}`, {
      daily_limit_usd: "2.5",
      monthly_limit_usd: null,
      requests_per_minute: 30,
      models: [TEST_MODEL],
      expires_at: expiresAt,
      actor: "dave",
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.key.expires_at, expiresAt);
    assert.deepEqual(updated.body.key.models, [TEST_MODEL]);
    assert.equal(updated.body.limits.daily_limit_micro_usd, "2500000");
    assert.equal(updated.body.limits.requests_per_minute, 30);

    const past = await callAdmin(context, "PATCH", `/keys/${key.id}`, { expires_at: "2020-01-01" });
    assert.equal(past.status, 400);
    assert.equal(past.body.error.param, "expires_at");
    assert.match(past.body.error.message, /must be in the future/);
    const garbled = await callAdmin(context, "PATCH", `/keys/${key.id}`, { expires_at: "next week" });
    assert.equal(garbled.body.error.param, "expires_at");
    const negative = await callAdmin(context, "PATCH", `/keys/${key.id}`, { daily_limit_usd: "-1" });
    assert.equal(negative.status, 400);
    assert.equal(negative.body.error.param, "daily_limit_usd");
    const unknownField = await callAdmin(context, "PATCH", `/keys/${key.id}`, { colour: "red" });
    assert.equal(unknownField.body.error.param, "colour");

    // Clearing the expiry: the key never expires again, and the change is in the audit log.
    const cleared = await callAdmin(context, "PATCH", `/keys/${key.id}`, { expires_at: null, actor: "erin" });
    assert.equal(cleared.body.key.expires_at, null);
    const { body } = await callAdmin(context, "GET", `/audit-log?key_id=${key.id}`);
    assertDocumented("AdminAuditPage", body);
    assert.deepEqual(
      body.data.map((entry: Json) => [entry.action, entry.actor]),
      [
        ["key.limits_updated", "erin"],
        ["key.limits_updated", "dave"],
        ["key.total_reset", "carol"],
        ["key.created", "admin"],
      ],
    );
    assert.equal(body.data[0].details.before.expires_at, expiresAt);
    assert.equal(body.data[0].details.after.expires_at, null);
    assert.equal(body.data[1].details.after.daily_limit_micro_usd, "2500000");
    assert.equal(body.data[1].workspace_id, context.workspaceId);
  });

  await t.test("audit log: keyset pages cover every entry once, newest first", async () => {
    for (let index = 0; index < 5; index++) {
      await callAdmin(context, "PATCH", `/keys/${context.keyId}`, {
        requests_per_minute: 100 + index,
        actor: `bot-${index}`,
      });
    }
    const seen: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const query: string = `/audit-log?workspace_id=${context.workspaceId}&limit=3${before ? `&before=${before}` : ""}`;
      const page = await callAdmin(context, "GET", query);
      assert.equal(page.status, 200);
      assert.ok(page.body.data.length <= 3);
      seen.push(...page.body.data.map((entry: Json) => entry.id));
      before = page.body.next_before;
      pages++;
    } while (before !== null);
    assert.equal(
      seen.length,
      11,
      "the workspace's creation, the first key's creation and 3 changes, the second key's creation and 5 changes",
    );
    assert.equal(new Set(seen).size, 11);
    assert.deepEqual(
      [...seen].sort((a, b) => Number(b) - Number(a)),
      seen,
      "newest first",
    );
    assert.equal(pages, 4);

    const bad = await callAdmin(context, "GET", "/audit-log?before=abc");
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, "before");
    const tooMany = await callAdmin(context, "GET", "/audit-log?limit=1000");
    assert.equal(tooMany.body.error.param, "limit");
    const unknown = await callAdmin(context, "GET", "/audit-log?workspace_id=ws_missing");
    assert.equal(unknown.body.error.param, "workspace_id");
  });

  await t.test("playground keys: one-time, source=playground, minted for the operator", async () => {
    const minted = await callAdmin(context, "POST", "/playground-keys", {
      workspace_id: context.workspaceId,
      operator: "olga",
    });
    assert.equal(minted.status, 201);
    assertDocumented("AdminPlaygroundKey", minted.body);
    assert.equal(minted.body.user_id, "console:olga");
    assert.equal(minted.body.source, "playground");
    const first = await chat(context, minted.body.key);
    assert.equal(first.status, 200);
    const second = await chat(context, minted.body.key);
    assert.equal(second.status, 401, "the key admitted one request only");
    const record = await waitFor(
      async () => (await context.gateway.store.reports.findGeneration(first.requestId)) ?? undefined,
      "the playground request recorded",
    );
    assert.equal(record.source, "playground");
    assert.equal(record.workspaceId, context.workspaceId);

    const missing = await callAdmin(context, "POST", "/playground-keys", { workspace_id: "ws_missing" });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.param, "workspace_id");
    const extra = await callAdmin(context, "POST", "/playground-keys", {
      workspace_id: context.workspaceId,
      user: "x",
    });
    assert.equal(extra.body.error.param, "user");
    const refused = await callAdmin(
      context,
      "POST",
      "/playground-keys",
      { workspace_id: context.workspaceId },
      "x",
    );
    assert.equal(refused.status, 401);
  });
});
