/**
 * Budget alerts end to end (docs/limits.md, "Budget alerts"): a key with a daily limit and a 50 %
 * threshold, its workspace's webhook at a loopback receiver. A request that spends past half the
 * limit sends one signed webhook after settlement; the receiver fails the first attempt (500) and
 * takes the retry; both attempts are listed by the admin API; a second request past the same
 * threshold sends nothing more. And two alert checkers (two instances) over one database that
 * settle past the same threshold at once send exactly one webhook.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createBudgetAlerts } from "../../src/alerts/budget-alerts.js";
import { verifyWebhook } from "../../src/alerts/sign-webhook.js";
import { keyInfoSchema } from "../../src/http/routes/key-info-route.js";
import { openStore } from "../../src/storage/open-store.js";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { createTestDatabase, requireMode } from "../helpers/storage-modes.js";
import { forEachGatewayMode, TEST_MODEL } from "../helpers/test-gateway.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

// biome-ignore lint/suspicious/noExplicitAny: admin API documents are read field by field.
type AdminDocument = any;

async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

forEachGatewayMode(
  "crossing a threshold sends one signed webhook, retried after a 500, every attempt listed",
  async (context) => {
    const receiver = await startWebhookReceiver([500, 200]);
    try {
      const admin = (method: string, path: string, body?: unknown) =>
        fetch(`${context.url}/internal/admin${path}`, {
          method,
          headers: {
            "X-Internal-Token": context.gateway.internalSecret,
            "Content-Type": "application/json",
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (response) => ({
          status: response.status,
          json: (await response.json()) as AdminDocument,
        }));

      // $0.01 a day; 50 % is 5,000 µUSD; each request below costs 8,000 µUSD of output and its prompt.
      await context.admin.updateKey(context.keyId, { dailyLimitUsd: "0.01", totalLimitUsd: "1" });
      const refused = await admin("PATCH", `/workspaces/${context.workspaceId}/alert-webhook`, {
        url: "http://10.0.0.1/hook",
      });
      assert.equal(refused.status, 400, "a private address is refused");
      assert.equal(refused.json.error.param, "url");
      const set = await admin("PATCH", `/workspaces/${context.workspaceId}/alert-webhook`, {
        url: receiver.url,
        thresholds: [90],
      });
      assert.equal(set.status, 200, JSON.stringify(set.json));
      const secret = set.json.secret as string;
      assert.match(secret, /^whsec_/);
      const shown = await admin("GET", `/workspaces/${context.workspaceId}/alert-webhook`);
      assert.deepEqual(
        shown.json.webhook,
        { url: receiver.url, thresholds: [90] },
        "the secret is shown once",
      );
      const keyThresholds = await admin("PATCH", `/keys/${context.keyId}/alert-thresholds`, {
        thresholds: [100, 50, 50],
      });
      assert.deepEqual(keyThresholds.json.thresholds, [50, 100], "the key's own replace the workspace's");
      const keyInfo = async () =>
        keyInfoSchema.parse(
          await (
            await fetch(`${context.url}/api/v1/key`, {
              headers: { Authorization: `Bearer ${context.apiKey}` },
            })
          ).json(),
        ).data.alerts;
      assert.deepEqual(
        await keyInfo(),
        {
          thresholds: [50, 100],
          source: "key",
          webhook: true,
          crossed: { daily: [], monthly: [], total: [] },
        },
        "GET /api/v1/key shows the thresholds that apply, none crossed yet",
      );

      const usage = { prompt_tokens: 10, completion_tokens: 1_000, total_tokens: 1_010 };
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ usage })));
      await context.openai.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: "spend" }],
        max_tokens: 1_000,
      });
      const deliveries = await waitFor(
        () => admin("GET", `/workspaces/${context.workspaceId}/alert-deliveries`),
        (answer) => answer.json.data?.some((delivery: { delivered: boolean }) => delivery.delivered),
      );
      const attempts = (deliveries.json.data as Array<Record<string, unknown>>).slice().reverse();
      assert.deepEqual(
        attempts.map((attempt) => [
          attempt.attempt,
          attempt.status_code,
          attempt.delivered,
          attempt.threshold_percent,
        ]),
        [
          [1, 500, false, 50],
          [2, 200, true, 50],
        ],
      );
      assert.equal(attempts[0].alert_id, attempts[1].alert_id);
      assert.equal(receiver.received.length, 2);
      for (const { headers, body } of receiver.received) {
        assert.ok(verifyWebhook(secret, body, String(headers["x-hi-signature"])), "the signature verifies");
        assert.equal(verifyWebhook("whsec_other", body, String(headers["x-hi-signature"])), false);
      }
      const alert = JSON.parse(receiver.received[1].body);
      assert.equal(alert.type, "budget.threshold_crossed");
      assert.equal(alert.api_key_id, context.keyId);
      assert.equal(alert.window, "daily");
      assert.equal(alert.threshold_percent, 50);
      assert.equal(alert.limit_micro_usd, "10000");
      assert.ok(Number(alert.spent_micro_usd) >= 5_000);

      // Past 50 % again in the same day: no second alert (the total's 1 % threshold is not set).
      context.upstream.enqueue(
        fakeReply.json(
          buildChatCompletion({ usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }),
        ),
      );
      await context.openai.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: "spend more" }],
        max_tokens: 10,
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(receiver.received.length, 2, "at most once per threshold per window");

      const alerts = await keyInfo();
      assert.deepEqual(
        {
          daily: alerts.crossed.daily.map((crossed) => crossed.threshold_percent),
          total: alerts.crossed.total,
        },
        { daily: [50], total: [] },
        "GET /api/v1/key shows the daily 50 % crossed; the total's $1 is far",
      );
      assert.ok(Math.abs(Date.parse(alerts.crossed.daily[0].crossed_at) - Date.now()) < 60_000);
      await admin("PATCH", `/keys/${context.keyId}/alert-thresholds`, { thresholds: null });
      assert.deepEqual(
        { thresholds: (await keyInfo()).thresholds, source: (await keyInfo()).source },
        { thresholds: [90], source: "workspace" },
        "without its own, the workspace's thresholds apply",
      );
    } finally {
      await new Promise((resolve) => receiver.server.close(resolve));
    }
  },
  { alertWebhookAllowLoopback: true },
);

test("two instances settling past the same threshold at once send one webhook [postgres]", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  const receiver = await startWebhookReceiver([]);
  const stores = [
    await openStore({ databaseUrl: database.url, dataDir: "/nonexistent" }),
    await openStore({ databaseUrl: database.url, dataDir: "/nonexistent" }),
  ];
  try {
    const [first] = stores;
    const workspace = await first.workspaces.create({
      name: "race",
      creditsMicroUsd: 10_000_000,
      invoicing: false,
    });
    const { key } = await first.apiKeys.create({
      workspaceId: workspace.id,
      limits: { dailyMicroUsd: 1_000 },
    });
    await first.alerts.setWebhook(workspace.id, {
      url: receiver.url,
      secret: "whsec_race",
      thresholds: [80],
    });
    // 900 µUSD settled today: past 80 % of 1,000.
    const { createTestOutcome, createTestStart } = await import("../helpers/generation-records.js");
    const now = Date.now();
    await first.generations.start(
      createTestStart(
        { id: "gen-race", workspaceId: workspace.id, apiKeyId: key.id },
        { createdAt: new Date(now) },
      ),
    );
    await first.generations.finish("gen-race", createTestOutcome({ costMicroUsd: 900 }));
    const instances = stores.map((store) =>
      createBudgetAlerts({
        alerts: store.alerts,
        keyLimits: store.keyLimits,
        policy: { allowHttp: true, allowLoopback: true },
        backoffBaseMs: 10,
      }),
    );
    const limits = {
      dailyMicroUsd: 1_000,
      monthlyMicroUsd: null,
      totalMicroUsd: null,
      requestsPerMinute: null,
      totalResetAt: null,
    };
    for (let round = 0; round < 5; round++) {
      for (const instance of instances) {
        instance.onSettled({
          keyId: key.id,
          workspaceId: workspace.id,
          limits,
          admittedAt: now,
          costMicroUsd: 100,
        });
      }
    }
    await Promise.all(instances.map((instance) => instance.idle()));
    assert.equal(receiver.received.length, 1, "one webhook for ten concurrent checks on two instances");
    assert.ok(
      verifyWebhook(
        "whsec_race",
        receiver.received[0].body,
        String(receiver.received[0].headers["x-hi-signature"]),
      ),
    );
    assert.equal((await first.alerts.listDeliveries(workspace.id, 10)).length, 1);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await new Promise((resolve) => receiver.server.close(resolve));
    await database.drop();
  }
});
