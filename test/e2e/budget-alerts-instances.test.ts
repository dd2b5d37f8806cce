/**
 * Budget alerts across instances (docs/limits.md, "Budget alerts"; decision 0331): two real gateway
 * processes on one PostgreSQL and one Redis settle requests of one key at the same time, and the
 * key's spend crosses its thresholds while both are checking. Each threshold is sent once: the
 * loopback receiver gets one webhook per threshold, and one delivery of each is recorded.
 *
 * The key's daily limit is 10,000 µUSD; every request costs (and reserves) exactly 1,000 µUSD, so
 * the ten requests below, five through each gateway at once, are all admitted and reach 100 %.
 * Thresholds 50 and 100: the first is crossed by settlements on both instances at once, the
 * second by the last one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { verifyWebhook } from "../../src/alerts/sign-webhook.js";
import { openStore } from "../../src/storage/open-store.js";
import { startGatewayCluster } from "../helpers/gateway-process.js";
import { chatBody, createLimitsConfig, startPricedUpstream, waitFor } from "../helpers/limits-cluster.js";
import { requireMode } from "../helpers/storage-modes.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

const REQUESTS_PER_GATEWAY = 5;

test("two gateway processes crossing the same thresholds at once send one webhook per threshold", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startPricedUpstream();
  const receiver = await startWebhookReceiver();
  const cluster = await startGatewayCluster({
    count: 2,
    config: createLimitsConfig(upstream.baseUrl),
    env: { FAKE_UPSTREAM_KEY: "sk-upstream", ALERT_WEBHOOK_ALLOW_LOOPBACK: "true" },
  }).catch(async (error) => {
    await upstream.close();
    await new Promise((resolve) => receiver.server.close(resolve));
    throw error;
  });
  const store = await openStore({ databaseUrl: cluster.databaseUrl, dataDir: "/nonexistent" });
  try {
    const workspace = await cluster.admin.createWorkspace({ name: "alerts", creditsUsd: "10" });
    const { key, secret } = await cluster.admin.createKey({
      workspaceId: workspace.id,
      dailyLimitUsd: "0.01",
    });
    const webhookSecret = "whsec_two_instances";
    await store.alerts.setWebhook(workspace.id, {
      url: receiver.url,
      secret: webhookSecret,
      thresholds: [50, 100],
    });

    const answers = await Promise.all(
      cluster.gateways.flatMap((gateway) =>
        Array.from({ length: REQUESTS_PER_GATEWAY }, () =>
          fetch(`${gateway.url}/api/v1/chat/completions`, {
            method: "POST",
            headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
            body: chatBody(),
          }).then(async (response) => ({ status: response.status, body: await response.text() })),
        ),
      ),
    );
    for (const answer of answers) assert.equal(answer.status, 200, answer.body);

    // Both thresholds delivered; then long enough for a second delivery of either to show up.
    const delivered = await waitFor(async () => receiver.received.length >= 2, 20_000);
    assert.ok(delivered, `webhooks received: ${receiver.received.length}`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const alerts = receiver.received.map(({ headers, body }) => {
      assert.ok(verifyWebhook(webhookSecret, body, String(headers["x-hi-signature"])));
      return JSON.parse(body) as { api_key_id: string; window: string; threshold_percent: number };
    });
    assert.deepEqual(
      alerts
        .map((alert) => `${alert.api_key_id} ${alert.window} ${alert.threshold_percent}`)
        .sort((a, b) => a.localeCompare(b)),
      [`${key.id} daily 100`, `${key.id} daily 50`],
      "one webhook per threshold, whichever instance claimed it",
    );
    const deliveries = await store.alerts.listDeliveries(workspace.id, 10);
    assert.equal(deliveries.length, 2, "one delivery attempt recorded per threshold");
  } finally {
    await store.close();
    await cluster.stop();
    await upstream.close();
    await new Promise((resolve) => receiver.server.close(resolve));
  }
});
