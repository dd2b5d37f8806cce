/**
 * The admin API's reports on a real gateway in both runtime modes: a key's spend per window with
 * the reservations of requests in flight, a workspace's usage per day and model, its latest
 * requests, and one request by id; each behind X-Internal-Token and described in /openapi.json.
 */
import assert from "node:assert/strict";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { createOpenApiValidator } from "../helpers/openapi-schema-validator.js";
import { forEachGatewayMode, OTHER_MODEL, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

// Test catalog: $2/M in, $8/M out; the fake upstream bills 10 in + 5 out = 60 µUSD per request.
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const REQUEST_COST = 60;

// biome-ignore lint/suspicious/noExplicitAny: wire bodies read field by field.
type Json = any;

async function getAdmin(context: TestGateway, path: string, token = context.gateway.internalSecret) {
  const response = await fetch(`${context.url}/internal/admin${path}`, {
    headers: { "X-Internal-Token": token },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function chat(context: TestGateway, apiKey: string, model = TEST_MODEL, stream = false) {
  const response = await fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
  });
  await response.arrayBuffer();
  assert.equal(response.status, 200);
  return response.headers.get("x-request-id")!;
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

forEachGatewayMode("admin API reports", async (context, t) => {
  context.upstream.setHandler(() => fakeReply.json(buildChatCompletion({ usage: USAGE })));
  const { key, secret } = await context.admin.createKey({
    workspaceId: context.workspaceId,
    name: "reports",
    dailyLimitUsd: "1",
    requestsPerMinute: 500,
  });
  const firstId = await chat(context, secret);
  const secondId = await chat(context, secret, OTHER_MODEL);
  const otherKeyId = await chat(context, context.apiKey);
  const validator = createOpenApiValidator(await (await fetch(`${context.url}/openapi.json`)).json());
  const assertDocumented = (schema: string, body: unknown) =>
    assert.deepEqual(validator.validate(schema, body), [], `${schema} in /openapi.json`);

  await t.test("key spend: settled spend per window, limits, rate limit, balance", async () => {
    const { status, body } = await getAdmin(context, `/keys/${key.id}/spend`);
    assert.equal(status, 200);
    assertDocumented("AdminKeySpend", body);
    assert.equal(body.key.id, key.id);
    assert.equal(body.limits.daily_limit_micro_usd, "1000000");
    assert.equal(body.spend.daily.spent_micro_usd, String(2 * REQUEST_COST));
    assert.equal(body.spend.daily.reserved_micro_usd, "0");
    assert.equal(body.spend.daily.remaining_micro_usd, String(1_000_000 - 2 * REQUEST_COST));
    assert.equal(body.spend.monthly.limit_micro_usd, null);
    assert.equal(body.spend.total.spent_micro_usd, String(2 * REQUEST_COST));
    assert.deepEqual(body.rate_limit, { requests_per_minute: 500, source: "key" });
    assert.equal(body.workspace.balance_micro_usd, String(10_000_000 - 3 * REQUEST_COST));
  });

  await t.test("key spend: a request in flight shows as reserved, and no longer once it ends", async () => {
    context.upstream.enqueue(
      fakeReply.sse([{ delayMs: 1_500 }, ...buildTextChunks(["slow"], { usage: USAGE })]),
    );
    const inFlight = chat(context, secret, TEST_MODEL, true);
    const reserved = await waitFor(async () => {
      const { body } = await getAdmin(context, `/keys/${key.id}/spend`);
      const micro = Number(body.spend.daily.reserved_micro_usd);
      return micro > 0 ? body : undefined;
    }, "a reservation");
    assert.ok(Number(reserved.workspace.reserved_micro_usd) > 0);
    await inFlight;
    const settled = await waitFor(async () => {
      const { body } = await getAdmin(context, `/keys/${key.id}/spend`);
      return body.spend.daily.reserved_micro_usd === "0" ? body : undefined;
    }, "the reservation released");
    assert.equal(settled.spend.daily.spent_micro_usd, String(3 * REQUEST_COST));
  });

  await t.test("usage per UTC day and model over the last 30 days", async () => {
    const { status, body } = await getAdmin(context, `/workspaces/${context.workspaceId}/usage`);
    assert.equal(status, 200);
    assertDocumented("AdminDailyUsage", body);
    assert.equal(body.days, 30);
    assert.equal(Date.parse(body.until) - Date.parse(body.since), 30 * 86_400_000);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(
      body.data.map((row: Json) => [row.day, row.model, row.requests, row.cost_micro_usd]),
      [
        [today, TEST_MODEL, 3, String(3 * REQUEST_COST)],
        [today, OTHER_MODEL, 1, String(REQUEST_COST)],
      ],
    );
    assert.equal(body.data[0].cost_usd, 0.00018);
    const week = await getAdmin(context, `/workspaces/${context.workspaceId}/usage?days=7`);
    assert.equal(week.body.days, 7);
  });

  await t.test("latest requests of a workspace, newest first, with cost and status", async () => {
    const { status, body } = await getAdmin(context, `/workspaces/${context.workspaceId}/generations`);
    assert.equal(status, 200);
    assertDocumented("AdminGeneration", body.data[0]);
    assert.equal(body.data.length, 4);
    assert.deepEqual(
      body.data.slice(1).map((row: Json) => row.id),
      [otherKeyId, secondId, firstId],
    );
    assert.equal(body.data[1].api_key_id, context.keyId);
    assert.equal(body.data[3].status, "ok");
    assert.equal(body.data[3].cost_micro_usd, String(REQUEST_COST));
    assert.equal(body.data[3].workspace_id, context.workspaceId);
    const ofKey = await getAdmin(
      context,
      `/workspaces/${context.workspaceId}/generations?key_id=${key.id}&limit=2`,
    );
    assert.deepEqual(
      ofKey.body.data.map((row: Json) => row.api_key_id),
      [key.id, key.id],
    );
  });

  await t.test("one request by its id, whatever its workspace", async () => {
    const other = await context.admin.createWorkspace({ name: "elsewhere", creditsUsd: "1" });
    const otherKey = await context.admin.createKey({ workspaceId: other.id });
    const foreignId = await chat(context, otherKey.secret);
    const { status, body } = await waitFor(async () => {
      const answer = await getAdmin(context, `/generations/${foreignId}`);
      return answer.status === 200 ? answer : undefined;
    }, "the foreign request");
    assert.equal(status, 200);
    assertDocumented("AdminGeneration", body.generation);
    assert.equal(body.generation.workspace_id, other.id);
    assert.equal(body.generation.cost_micro_usd, String(REQUEST_COST));
    const unknown = await getAdmin(context, "/generations/no-such-request");
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, "id");
  });

  await t.test("bad input is refused naming the field; every report needs the token", async () => {
    const cases: Array<[string, string]> = [
      [`/workspaces/${context.workspaceId}/usage?days=0`, "days"],
      [`/workspaces/${context.workspaceId}/usage?days=91`, "days"],
      [`/workspaces/${context.workspaceId}/usage?days=1.5`, "days"],
      [`/workspaces/${context.workspaceId}/generations?limit=201`, "limit"],
      ["/workspaces/ws_unknown/usage", "id"],
      ["/workspaces/ws_unknown/generations", "id"],
      ["/keys/key_unknown/spend", "id"],
    ];
    for (const [path, param] of cases) {
      const { status, body } = await getAdmin(context, path);
      assert.equal(status, 400, path);
      assert.equal(body.error.code, "invalid_request", path);
      assert.equal(body.error.param, param, path);
    }
    for (const path of [
      `/keys/${key.id}/spend`,
      `/workspaces/${context.workspaceId}/usage`,
      `/workspaces/${context.workspaceId}/generations`,
      `/generations/${firstId}`,
    ]) {
      const { status, body } = await getAdmin(context, path, "wrong-token");
      assert.equal(status, 401, path);
      assert.equal(body.error.code, "invalid_api_key", path);
    }
  });
});
