/**
 * Spend limits as a caller meets them, on a real gateway in both runtime modes: `GET /api/v1/key`,
 * the error bodies at each limit in each format, the output cap lowered when the
 * caller set none, the total reset with its audit entry, and credit reaching the balance counter.
 */
import assert from "node:assert/strict";
import { createAdminService } from "../../src/admin/admin-service.js";
import { keyInfoSchema } from "../../src/http/routes/key-info-route.js";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

// Test catalog: $2/M in, $8/M out. The fake upstream bills 10 in + 5 out = 60 µUSD per request.
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const REQUEST_COST = 60;

function adminFor(context: TestGateway) {
  return createAdminService({
    store: context.gateway.store,
    state: context.gateway.state,
    spendGuard: context.gateway.spendGuard,
  });
}

async function post(context: TestGateway, path: string, secret: string, body: Record<string, unknown>) {
  const response = await fetch(`${context.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, ...body }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: wire bodies of several formats.
  return { response, body: (await response.json()) as any };
}

const chat = (max?: number) => ({
  messages: [{ role: "user", content: "hi" }],
  ...(max === undefined ? {} : { max_tokens: max }),
});

forEachGatewayMode("spend limits as the caller sees them", async (context, t) => {
  const admin = adminFor(context);
  context.upstream.setHandler(() => fakeReply.json(buildChatCompletion({ usage: USAGE })));

  await t.test(
    "GET /api/v1/key: limits, spend per window, headroom, rate limit, allowlist, expiry",
    async () => {
      const expiresAt = new Date(Date.now() + 86_400_000);
      const { key, secret } = await admin.createKey({
        workspaceId: context.workspaceId,
        name: "info",
        models: [TEST_MODEL],
        expiresAt,
        dailyLimitUsd: "0.01",
        totalLimitUsd: "1",
        requestsPerMinute: 100,
      });
      for (let index = 0; index < 3; index++) {
        assert.equal(
          (await post(context, "/api/v1/chat/completions", secret, chat(10))).response.status,
          200,
        );
      }
      const response = await fetch(`${context.url}/api/v1/key`, {
        headers: { Authorization: `Bearer ${secret}` },
      });
      assert.equal(response.status, 200);
      const body = keyInfoSchema.parse(await response.json());
      const { data } = body;
      assert.equal(data.id, key.id);
      assert.deepEqual(data.models, [TEST_MODEL]);
      assert.equal(data.expires_at, expiresAt.toISOString());
      assert.deepEqual(data.rate_limit, { requests_per_minute: 100, source: "key" });
      const spent = 3 * REQUEST_COST;
      assert.deepEqual(
        {
          limit: data.limits.daily.limit_micro_usd,
          spent: data.limits.daily.spent_micro_usd,
          reserved: data.limits.daily.reserved_micro_usd,
          remaining: data.limits.daily.remaining_micro_usd,
          remainingUsd: data.limits.daily.remaining_usd,
        },
        {
          limit: "10000",
          spent: String(spent),
          reserved: "0",
          remaining: String(10_000 - spent),
          remainingUsd: (10_000 - spent) / 1e6,
        },
      );
      assert.match(data.limits.daily.resets_at!, /T00:00:00\.000Z$/);
      assert.match(data.limits.monthly.resets_at!, /-01T00:00:00\.000Z$/);
      assert.equal(data.limits.monthly.limit_usd, null);
      assert.equal(data.limits.monthly.remaining_usd, null);
      assert.equal(data.limits.monthly.spent_micro_usd, String(spent));
      assert.equal(data.limits.total.resets_at, null);
      assert.equal(data.limits.total.window_start, key.createdAt.toISOString());
      assert.equal(data.workspace.invoicing, false);
      assert.equal(Number(data.workspace.balance_micro_usd), data.workspace.balance_usd * 1e6);

      const document = (await (await fetch(`${context.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      assert.ok(document.paths["/api/v1/key"]?.get, "GET /api/v1/key is in the OpenAPI document");
      const anonymous = await fetch(`${context.url}/api/v1/key`);
      assert.equal(anonymous.status, 401);
    },
  );

  await t.test("at the limit: 402 key_limit_exceeded naming it, in each format", async () => {
    const { secret } = await admin.createKey({ workspaceId: context.workspaceId, dailyLimitUsd: "0.0001" });
    // 100 µUSD: the first request reserves 10·2 + 10·8 = 100 µUSD (input estimate ~10 tokens).
    const first = await post(context, "/api/v1/chat/completions", secret, chat(8));
    assert.equal(first.response.status, 200, JSON.stringify(first.body));
    const refused = await post(context, "/api/v1/chat/completions", secret, chat(8));
    assert.equal(refused.response.status, 402);
    assert.equal(refused.response.headers.get("retry-after"), null);
    assert.equal(refused.body.error.code, "key_limit_exceeded");
    assert.equal(refused.body.error.type, "insufficient_quota");
    assert.match(
      refused.body.error.message,
      /^This API key's daily spend limit of \$0\.0001 is (nearly )?reached/,
    );
    assert.match(refused.body.error.message, /resets at \S+T00:00:00\.000Z \(00:00 UTC\)/);

    const messages = await post(context, "/api/v1/messages", secret, { ...chat(), max_tokens: 8 });
    assert.equal(messages.response.status, 402);
    assert.equal(messages.body.type, "error");
    assert.equal(messages.body.error.type, "billing_error");
    assert.equal(messages.body.error.code, "key_limit_exceeded");
    const responses = await post(context, "/api/v1/responses", secret, { input: "hi", max_output_tokens: 8 });
    assert.equal(responses.response.status, 402);
    assert.equal(responses.body.error.code, "key_limit_exceeded");
  });

  await t.test("no cap given: lowered to what the limit affords; given: honoured or refused", async () => {
    const { secret } = await admin.createKey({ workspaceId: context.workspaceId, monthlyLimitUsd: "0.002" });
    const lowered = await post(context, "/api/v1/chat/completions", secret, chat());
    assert.equal(lowered.response.status, 200);
    const sent = context.upstream.requests.at(-1)!.body.max_completion_tokens as number;
    // 2000 µUSD minus the input estimate at $2/M, at $8/M per output token: just under 250.
    assert.ok(sent > 200 && sent < 250, `lowered cap ${sent}`);
    const explicit = await post(context, "/api/v1/chat/completions", secret, chat(4_000));
    assert.equal(explicit.response.status, 402);
    assert.match(
      explicit.body.error.message,
      /nearly reached: \$0\.00194 is left .* may cost up to \$0\.03202/,
    );
  });

  await t.test("total limit: reset by an admin, audit-logged with the previous spend", async () => {
    const { key, secret } = await admin.createKey({
      workspaceId: context.workspaceId,
      totalLimitUsd: "0.0001",
    });
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
    const refused = await post(context, "/api/v1/chat/completions", secret, chat(8));
    assert.equal(refused.response.status, 402);
    assert.match(refused.body.error.message, /total spend limit of \$0\.0001 .* It does not reset by itself/);
    const reset = await admin.resetKeyTotal(key.id, "ops@example.com");
    assert.equal(reset.previousSpendMicroUsd, REQUEST_COST);
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
    const [entry] = await context.gateway.store.keyLimits.listAudit({ apiKeyId: key.id });
    assert.equal(entry.action, "key.total_reset");
    assert.equal(entry.actor, "ops@example.com");
    assert.equal(entry.details.previous_total_spend_micro_usd, String(REQUEST_COST));
    const info = keyInfoSchema.parse(
      await (
        await fetch(`${context.url}/api/v1/key`, { headers: { Authorization: `Bearer ${secret}` } })
      ).json(),
    );
    assert.equal(info.data.limits.total.spent_micro_usd, String(REQUEST_COST));
    assert.equal(info.data.limits.total.window_start, reset.resetAt.toISOString());
  });

  await t.test("no credit: insufficient_credits; a credit is seen on the next request", async () => {
    const workspace = await admin.createWorkspace({ name: "poor", creditsUsd: "0.0001" });
    const { secret } = await admin.createKey({ workspaceId: workspace.id });
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
    const refused = await post(context, "/api/v1/chat/completions", secret, chat(8));
    assert.equal(refused.response.status, 402);
    assert.equal(refused.body.error.code, "insufficient_credits");
    assert.match(refused.body.error.message, /available credit of \$0\.00004/);
    await admin.creditWorkspace(workspace.id, "1");
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
  });

  await t.test("a credit made elsewhere reaches the balance counter through its announcement", async () => {
    const workspace = await admin.createWorkspace({ name: "elsewhere", creditsUsd: "0.0001" });
    const { secret } = await admin.createKey({ workspaceId: workspace.id });
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 402);
    // An admin service that knows nothing of the spend guard (another instance, the CLI).
    await context.admin.creditWorkspace(workspace.id, "1");
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status;
    }
    assert.equal(status, 200, "admitted within 2 s of the credit, long before the counter's maximum age");
  });

  await t.test("rate limit: 429 with Retry-After in the messages format too", async () => {
    const { secret } = await admin.createKey({ workspaceId: context.workspaceId, requestsPerMinute: 1 });
    assert.equal((await post(context, "/api/v1/chat/completions", secret, chat(8))).response.status, 200);
    const limited = await post(context, "/api/v1/messages", secret, { ...chat(), max_tokens: 8 });
    assert.equal(limited.response.status, 429);
    assert.equal(limited.body.error.type, "rate_limit_error");
    assert.equal(limited.body.error.code, "rate_limit_exceeded");
    const seconds = Number(limited.response.headers.get("retry-after"));
    assert.equal(limited.body.error.retry_after_seconds, seconds);
    assert.ok(seconds >= 59 && seconds <= 60, `retry after ${seconds}`);
  });
});
