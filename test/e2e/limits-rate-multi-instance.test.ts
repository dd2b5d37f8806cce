/**
 * Rate limits are global: three real gateway processes behind a
 * round robin share one Redis window per key. A key allowing 10 requests per minute gets exactly
 * 10 of 30 concurrent requests through, whichever instance each reaches; the others are told when
 * a slot frees. Token counting is free and takes no slot. A key without its own value gets the
 * config's default.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startGatewayCluster } from "../helpers/gateway-process.js";
import { chatBody, createLimitsConfig, startPricedUpstream } from "../helpers/limits-cluster.js";
import { requireMode } from "../helpers/storage-modes.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

interface Outcome {
  status: number;
  code?: string;
  retryAfterHeader: string | null;
  retryAfterSeconds?: number;
}

async function sendRoundRobin(urls: string[], secret: string, count: number): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const response = await fetch(`${urls[index % urls.length]}/api/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
        body: chatBody(),
      });
      const body = (await response.json()) as { error?: { code: string; retry_after_seconds?: number } };
      return {
        status: response.status,
        code: body.error?.code,
        retryAfterHeader: response.headers.get("retry-after"),
        retryAfterSeconds: body.error?.retry_after_seconds,
      };
    }),
  );
}

test("rate limits across three gateway processes", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startPricedUpstream();
  const cluster = await startGatewayCluster({
    count: 3,
    config: createLimitsConfig(upstream.baseUrl, { default_requests_per_minute: 4 }),
    env: { FAKE_UPSTREAM_KEY: "sk-upstream" },
  }).catch(async (error) => {
    await upstream.close();
    throw error;
  });
  const urls = cluster.gateways.map((gateway) => gateway.url);
  try {
    const workspace = await cluster.admin.createWorkspace({ name: "rpm", creditsUsd: "10" });

    await t.test("rpm=10, 30 concurrent requests round-robin: exactly 10 accepted", async () => {
      const { secret } = await cluster.admin.createKey({
        workspaceId: workspace.id,
        requestsPerMinute: 10,
      });
      // Counting tokens is free and does not take a slot.
      for (const url of urls) {
        const response = await fetch(`${url}/api/v1/messages/count_tokens`, {
          method: "POST",
          headers: { "x-api-key": secret, "Content-Type": "application/json" },
          body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
        });
        assert.equal(response.status, 200);
        await response.body?.cancel();
      }

      const outcomes = await sendRoundRobin(urls, secret, 30);
      const accepted = outcomes.filter((outcome) => outcome.status === 200);
      const limited = outcomes.filter((outcome) => outcome.status === 429);
      assert.equal(accepted.length, 10, JSON.stringify(outcomes.map((outcome) => outcome.status)));
      assert.equal(limited.length, 20);
      for (const outcome of limited) {
        assert.equal(outcome.code, "rate_limit_exceeded");
        assert.equal(Number(outcome.retryAfterHeader), outcome.retryAfterSeconds, "header and body agree");
        assert.ok(
          outcome.retryAfterSeconds! >= 1 && outcome.retryAfterSeconds! <= 60,
          `time until a slot frees: ${outcome.retryAfterSeconds}`,
        );
      }
      // Per-instance windows would have let up to 30 through; which instance refused is incidental.
      const limitedPerInstance = urls.map(
        (_, instance) =>
          outcomes.filter((outcome, index) => index % 3 === instance && outcome.status === 429).length,
      );
      t.diagnostic(`rpm: 10/30 accepted; refusals per instance ${limitedPerInstance.join(", ")}`);

      const info = (await (
        await fetch(`${urls[1]}/api/v1/key`, { headers: { Authorization: `Bearer ${secret}` } })
      ).json()) as { data: { rate_limit: { requests_per_minute: number; source: string } } };
      assert.deepEqual(info.data.rate_limit, { requests_per_minute: 10, source: "key" });
    });

    await t.test("a key without its own value gets the config default, globally", async () => {
      const { key, secret } = await cluster.admin.createKey({ workspaceId: workspace.id });
      const outcomes = await sendRoundRobin(urls, secret, 9);
      assert.equal(outcomes.filter((outcome) => outcome.status === 200).length, 4);
      assert.equal(outcomes.filter((outcome) => outcome.code === "rate_limit_exceeded").length, 5);
      // Raising the key's own value applies on the next request, on every instance.
      await cluster.admin.updateKey(key.id, { requestsPerMinute: 6, actor: "test" });
      const more = await sendRoundRobin(urls, secret, 6);
      assert.equal(more.filter((outcome) => outcome.status === 200).length, 2);
    });
  } finally {
    await cluster.stop();
    await upstream.close();
  }
});
