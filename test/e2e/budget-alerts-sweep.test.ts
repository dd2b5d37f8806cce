/**
 * A request settled by the crash sweep counts toward budget alerts (docs/limits.md, "Budget
 * alerts"): a record left in progress by an instance that died is written final as `interrupted`
 * (billed its prompt estimate) by a live gateway's sweep, and that settlement checks the key's
 * thresholds like any other. Both modes: the key's daily limit is 1,000 µUSD with a 50 % threshold;
 * the orphan's 400 estimated prompt tokens at $2 per million cost 800 µUSD, so its settlement alone
 * crosses it and the loopback receiver gets one webhook saying so.
 */
import assert from "node:assert/strict";
import { verifyWebhook } from "../../src/alerts/sign-webhook.js";
import { computeInterruptedAgeMs } from "../../src/engine/interrupted-sweep.js";
import { computeLimitWindows } from "../../src/limits/limit-windows.js";
import { createTestStart } from "../helpers/generation-records.js";
import { forEachGatewayMode, TEST_MODEL } from "../helpers/test-gateway.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

forEachGatewayMode(
  "a request settled by the crash sweep crosses a threshold: one webhook",
  async (context) => {
    const receiver = await startWebhookReceiver();
    try {
      const { store, config } = context.gateway;
      await context.admin.updateKey(context.keyId, { dailyLimitUsd: "0.001" });
      const secret = "whsec_sweep";
      await store.alerts.setWebhook(context.workspaceId, { url: receiver.url, secret, thresholds: [50] });

      // Admitted by an instance that died, long enough ago that nobody is left to settle it.
      const admittedAt = new Date(Date.now() - computeInterruptedAgeMs(config) - 60_000);
      await store.generations.start(
        createTestStart(
          { id: "gen-orphan-alert", workspaceId: context.workspaceId, apiKeyId: context.keyId },
          { model: TEST_MODEL, createdAt: admittedAt, estimatedInputTokens: 400 },
        ),
      );
      assert.equal(await context.gateway.sweepInterrupted(), 1);

      const deadline = Date.now() + 15_000;
      while (receiver.received.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(receiver.received.length, 1, "the sweep's settlement was checked");
      const [delivery] = receiver.received;
      assert.ok(verifyWebhook(secret, delivery.body, String(delivery.headers["x-hi-signature"])));
      const alert = JSON.parse(delivery.body);
      assert.deepEqual(
        {
          key: alert.api_key_id,
          window: alert.window,
          start: alert.window_start,
          threshold: alert.threshold_percent,
          limit: alert.limit_micro_usd,
          spent: alert.spent_micro_usd,
        },
        {
          key: context.keyId,
          window: "daily",
          // The orphan's own day, by its admission time.
          start: new Date(computeLimitWindows(admittedAt.getTime(), null).daily.startMs).toISOString(),
          threshold: 50,
          limit: "1000",
          spent: "800",
        },
      );
      // Swept again (another instance, a later pass): already final, nothing more is sent.
      assert.equal(await context.gateway.sweepInterrupted(), 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 1);
    } finally {
      await new Promise((resolve) => receiver.server.close(resolve));
    }
  },
  { alertWebhookAllowLoopback: true },
);
