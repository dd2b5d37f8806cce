/**
 * The screenshots of the console's budget-alert parts (a key's thresholds, a workspace's Alerts
 * tab with its signing secret and deliveries), taken by scripts/console-screenshots.ts with its
 * gateway (which lets webhooks go to loopback), sample workspace and signed-in page.
 */
import { createServer } from "node:http";
import type { Page } from "playwright-core";
import type { RunningGateway } from "../src/gateway.js";
import {
  buildChatCompletion,
  type FakeOpenAiUpstream,
  fakeReply,
} from "../test/helpers/fake-openai-upstream.js";

export interface AlertPagesScene {
  page: Page;
  gateway: RunningGateway;
  upstream: FakeOpenAiUpstream;
  workspaceId: string;
  model: string;
  shoot(name: string, fullPage?: boolean): Promise<void>;
  shootElement(name: string, selector: string): Promise<void>;
}

export async function shootAlertPages(scene: AlertPagesScene): Promise<void> {
  const { page, gateway, upstream, workspaceId } = scene;
  // A loopback receiver that fails the first delivery, so the list shows a retry.
  let received = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.statusCode = received++ === 0 ? 500 : 200;
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const { port } = receiver.address() as { port: number };
  try {
    const { key, secret } = await gateway.admin.createKey({
      workspaceId,
      name: "nightly-batch",
      dailyLimitUsd: "0.01",
    });

    await page.goto(`${gateway.url}/console#/workspaces/${workspaceId}/alerts`);
    await page.waitForSelector("form.alert-webhook");
    await page.fill("input[name=webhook-url]", `http://127.0.0.1:${port}/hooks/budget`);
    await page.fill("input[name=webhook-thresholds]", "80, 100");
    await page.click("form.alert-webhook button[type=submit]");
    await page.waitForSelector(".webhook-secret");

    await page.goto(`${gateway.url}/console#/workspaces/${workspaceId}/keys/${key.id}`);
    await page.waitForSelector("form.key-alerts input[name=thresholds]");
    await page.uncheck("form.key-alerts input[name=use-workspace]");
    await page.fill("form.key-alerts input[name=thresholds]", "50, 80, 100");
    await scene.shootElement("key-alerts", "form.key-alerts");
    await page.click("form.key-alerts button[type=submit]");
    await page.getByText("Alert thresholds saved.").waitFor();

    // One request spends 95 % of the day's limit: 50 and 80 % are crossed at once.
    const usage = { prompt_tokens: 10, completion_tokens: 950, total_tokens: 960 };
    upstream.enqueue(fakeReply.json(buildChatCompletion({ usage })));
    const answer = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        model: scene.model,
        messages: [{ role: "user", content: "Summarise" }],
        max_tokens: 950,
      }),
    });
    await answer.arrayBuffer();
    // Sent after settlement, the first attempt retried a second later: wait for both delivered.
    const deadline = Date.now() + 20_000;
    const delivered = async () => {
      const response = await fetch(
        `${gateway.url}/internal/admin/workspaces/${workspaceId}/alert-deliveries`,
        {
          headers: { "X-Internal-Token": gateway.internalSecret },
        },
      );
      const { data } = (await response.json()) as { data: Array<{ delivered: boolean }> };
      return data.filter((row) => row.delivered).length;
    };
    while ((await delivered()) < 2) {
      if (Date.now() > deadline) throw new Error("the alerts were not delivered");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Setting the webhook again (a new secret) with the deliveries listed below.
    await page.goto(`${gateway.url}/console#/workspaces/${workspaceId}/alerts`);
    await page.waitForSelector(".alert-deliveries tr[data-delivery-id]");
    await page.click("form.alert-webhook button[type=submit]");
    await page.waitForSelector(".webhook-secret");
    await scene.shoot("alerts");
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
}
