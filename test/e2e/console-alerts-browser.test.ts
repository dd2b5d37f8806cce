/**
 * The console's budget-alert parts in headless Chromium, in both runtime modes: a workspace's
 * Alerts tab renders its empty delivery list, refuses a private webhook address with the API's
 * message, sets a loopback receiver (the gateway runs with ALERT_WEBHOOK_ALLOW_LOOPBACK) and shows
 * the signing secret once; a key's page edits its own thresholds (a bad value shows the API's
 * message) and goes back to the workspace's; a request past the workspace's 50 % threshold is
 * delivered to the receiver and listed on the tab; removing the webhook is what the API then holds.
 * Throughout: no script error, no Content-Security-Policy violation, nothing requested elsewhere.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Locator, Page } from "playwright-core";
import { signInToConsole, watchPage } from "../helpers/console-page.js";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { type HeadlessBrowser, launchChromium, requireChromium } from "../helpers/headless-chromium.js";
import { requireMode } from "../helpers/storage-modes.js";
import { GATEWAY_MODES, startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

// biome-ignore lint/suspicious/noExplicitAny: admin API documents are read field by field.
type AdminDocument = any;

test("console budget alerts in headless Chromium", { timeout: 180_000 }, async (t) => {
  if (!requireChromium(t)) return;
  let browser: HeadlessBrowser | undefined;
  try {
    browser = await launchChromium();
    for (const mode of GATEWAY_MODES) {
      await t.test(`[${mode}]`, async (t) => {
        if (
          mode === "distributed" &&
          (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis")))
        ) {
          return;
        }
        const context = await startTestGateway(mode, { alertWebhookAllowLoopback: true });
        const receiver = await startWebhookReceiver();
        const page = await browser!.context.newPage();
        const watch = watchPage(page, context.url, /status of 400/);
        try {
          await signInToConsole(page, context);
          await t.test("the workspace's webhook is set, its secret shown once", () =>
            runWebhookSetting(page, context, receiver.url),
          );
          await t.test("a key's own thresholds are edited, then the workspace's apply", () =>
            runKeyThresholds(page, context),
          );
          await t.test("a crossed threshold is delivered and listed", () =>
            runDelivery(page, context, receiver),
          );
          await t.test("the webhook is removed", () => runRemoval(page, context));
          assert.deepEqual(watch.problems, [], "no script error and no Content-Security-Policy violation");
          assert.deepEqual(watch.elsewhere, [], "the page requested nothing but the gateway");
        } finally {
          await page.close();
          await new Promise((resolve) => receiver.server.close(resolve));
          await context.close();
        }
      });
    }
  } finally {
    await browser?.close();
  }
});

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

async function adminGet(context: TestGateway, path: string): Promise<AdminDocument> {
  const response = await fetch(`${context.url}/internal/admin${path}`, {
    headers: { "X-Internal-Token": context.gateway.internalSecret },
  });
  assert.equal(response.status, 200, path);
  return response.json();
}

async function runWebhookSetting(page: Page, context: TestGateway, receiverUrl: string) {
  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}`);
  await page.click(".tabs a:text('Alerts')");
  const form = page.locator("form.alert-webhook");
  await form.waitFor();
  assert.equal(
    await page.locator(".alert-deliveries td.empty").innerText(),
    "No alert has been sent yet.",
    "the empty delivery list renders",
  );
  assert.match(await form.innerText(), /No webhook: no budget alerts are sent/);

  // A private address is refused with the API's message, naming the field.
  await form.locator("input[name=webhook-url]").fill("http://10.0.0.1/hook");
  await form.locator("button[type=submit]").click();
  await form.locator(".notice.error", { hasText: /^url: / }).waitFor();
  assert.equal((await adminGet(context, `/workspaces/${context.workspaceId}/alert-webhook`)).webhook, null);

  await form.locator("input[name=webhook-url]").fill(receiverUrl);
  await form.locator("input[name=webhook-thresholds]").fill("80, 50");
  await form.locator("button[type=submit]").click();
  const secretCard = page.locator(".webhook-secret");
  await secretCard.waitFor();
  assert.match(await secretCard.locator("code.secret").innerText(), /^whsec_\S+$/);
  assert.match(await secretCard.innerText(), /will not be shown again/);
  assert.deepEqual(
    (await adminGet(context, `/workspaces/${context.workspaceId}/alert-webhook`)).webhook,
    { url: receiverUrl, thresholds: [50, 80] },
    "what the API holds",
  );
  // The form now shows the webhook as stored (it is drawn again once the secret is shown, after
  // one more read: wait for that, not for the secret); a reload shows it again, without the secret.
  const storedThresholds = page.locator('form.alert-webhook input[name=webhook-thresholds][value="50, 80"]');
  await storedThresholds.waitFor({ timeout: 5_000 });
  assert.equal(
    await page.locator("form.alert-webhook input[name=webhook-thresholds]").inputValue(),
    "50, 80",
  );
  await page.reload();
  await page.locator("form.alert-webhook").waitFor();
  assert.equal(await page.locator("form.alert-webhook input[name=webhook-url]").inputValue(), receiverUrl);
  assert.equal(await page.locator(".webhook-secret").count(), 0, "the secret is shown once");
}

async function runKeyThresholds(page: Page, context: TestGateway) {
  // $0.01 a day: one request of the fake upstream below spends 80 % of it.
  await context.admin.updateKey(context.keyId, { dailyLimitUsd: "0.01" });
  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/keys/${context.keyId}`);
  const form = page.locator("form.key-alerts");
  await form.locator("input[name=thresholds]").waitFor();
  const useWorkspace = form.locator("input[name=use-workspace]");
  assert.equal(await useWorkspace.isChecked(), true, "no thresholds of its own yet");
  assert.equal(await form.locator("input[name=thresholds]").isDisabled(), true);

  await useWorkspace.uncheck();
  await form.locator("input[name=thresholds]").fill("0, 80");
  assert.equal(await submitKeyThresholds(page, form, context.keyId), 400);
  await form.locator(".notice.error", { hasText: "thresholds: 0 is not a whole percentage" }).waitFor();
  const path = `/keys/${context.keyId}/alert-thresholds`;
  assert.equal((await adminGet(context, path)).thresholds, null, "nothing changed");

  await form.locator("input[name=thresholds]").fill("100 90");
  assert.equal(await submitKeyThresholds(page, form, context.keyId), 200);
  await page.getByText("Alert thresholds saved.").waitFor();
  assert.deepEqual((await adminGet(context, path)).thresholds, [90, 100]);
  assert.equal(await form.locator("input[name=thresholds]").inputValue(), "90, 100");

  // Back to the workspace's (50 and 80), which the delivery below crosses. Ticking the box checks
  // it at once, and the "saved" notice is still there from the save above: what shows this save
  // landed is its answer, then the form drawn again from it (the field emptied, still disabled).
  await form.locator("input[name=use-workspace]").check();
  assert.equal(await submitKeyThresholds(page, form, context.keyId), 200);
  await form.locator('input[name=thresholds][value=""]').waitFor({ timeout: 5_000 });
  assert.equal(await form.locator("input[name=thresholds]").isDisabled(), true);
  assert.equal(await form.locator("input[name=use-workspace]").isChecked(), true);
  assert.equal((await adminGet(context, path)).thresholds, null);
}

/**
 * Submits a key's alert form and returns the status of the console's save call (PATCH
 * …/alert-thresholds) once the gateway has answered it (the wait is set up with the click, so a
 * quick answer is not missed).
 */
async function submitKeyThresholds(page: Page, form: Locator, keyId: string): Promise<number> {
  const path = `/internal/admin/keys/${encodeURIComponent(keyId)}/alert-thresholds`;
  const [answer] = await Promise.all([
    page.waitForResponse(
      (response) => response.request().method() === "PATCH" && new URL(response.url()).pathname === path,
      { timeout: 10_000 },
    ),
    form.locator("button[type=submit]").click(),
  ]);
  return answer.status();
}

async function runDelivery(page: Page, context: TestGateway, receiver: Receiver) {
  // 10 prompt tokens at $2/M and 1,000 completion tokens at $8/M: $0.00802 of a $0.01 day, 80.2 %.
  const usage = { prompt_tokens: 10, completion_tokens: 1_000, total_tokens: 1_010 };
  context.upstream.enqueue(fakeReply.json(buildChatCompletion({ usage })));
  await context.openai.chat.completions.create({
    model: TEST_MODEL,
    messages: [{ role: "user", content: "spend" }],
    max_tokens: 1_000,
  });
  // Alerts are sent after settlement, off the request path: wait until both are recorded.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { data } = await adminGet(context, `/workspaces/${context.workspaceId}/alert-deliveries`);
    if (data.filter((row: AdminDocument) => row.delivered).length === 2) break;
    assert.ok(Date.now() < deadline, "two deliveries recorded");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(
    receiver.received.map((delivery) => JSON.parse(delivery.body).threshold_percent).sort(),
    [50, 80],
    "the receiver got one alert per threshold crossed",
  );

  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/alerts`);
  const rows = page.locator(".alert-deliveries tr[data-delivery-id]");
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2);
  const cells = async (name: string) =>
    (await rows.locator(`td.${name}`).allInnerTexts()).map((text) => text.trim()).sort();
  assert.deepEqual(await cells("threshold"), ["50 %", "80 %"]);
  assert.deepEqual(await cells("status"), ["200", "200"]);
  assert.deepEqual(await cells("delivered"), ["yes", "yes"]);
  for (const window of await cells("window"))
    assert.match(window, /^daily from \d{4}-\d\d-\d\d 00:00:00 UTC$/);
}

async function runRemoval(page: Page, context: TestGateway) {
  const form = page.locator("form.alert-webhook");
  await form.locator("button:text('Remove webhook')").click();
  await form.locator("button[type=submit]", { hasText: "Set webhook" }).waitFor();
  assert.equal(await form.locator("input[name=webhook-url]").inputValue(), "");
  assert.equal((await adminGet(context, `/workspaces/${context.workspaceId}/alert-webhook`)).webhook, null);
  // The delivery log stays.
  assert.equal(await page.locator(".alert-deliveries tr[data-delivery-id]").count(), 2);
}
