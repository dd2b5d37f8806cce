/**
 * The web console end to end in headless Chromium, in both runtime modes: sign in with the admin
 * token, create a key, use it through the API against the loopback fake upstream, see the request
 * appear with its cost, disable the key and see the next call refused. Along the way: names that
 * are markup stay text, the page runs under its Content-Security-Policy without a violation, and
 * the browser talks to nothing but the gateway. The API reference at /docs renders there too.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import { watchPage } from "../helpers/console-page.js";
import { type HeadlessBrowser, launchChromium, requireChromium } from "../helpers/headless-chromium.js";
import { requireMode } from "../helpers/storage-modes.js";
import { GATEWAY_MODES, startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

// The fake upstream bills 10 prompt + 5 completion tokens; the test catalog charges $2/M and $8/M.
const REQUEST_COST_TEXT = "$0.00006";
const MARKUP_NAME = `<img src=x onerror="window.__injected=1">`;
const SCRIPT_NAME = `<script>window.__injected=2</script>`;

test("web console and API reference in headless Chromium", { timeout: 120_000 }, async (t) => {
  if (!requireChromium(t)) return;
  let browser: HeadlessBrowser | undefined;
  try {
    browser = await launchChromium();
    for (const mode of GATEWAY_MODES) {
      await t.test(`sign in, create a key, see its request and cost, disable it [${mode}]`, async (t) => {
        if (
          mode === "distributed" &&
          (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis")))
        ) {
          return;
        }
        const context = await startTestGateway(mode);
        const page = await browser!.context.newPage();
        try {
          // The reference page does not depend on the storage mode: one run is enough.
          if (mode === "embedded") await runDocsScenario(page, context);
          await runConsoleScenario(page, context);
        } finally {
          await page.close();
          await context.close();
        }
      });
    }
  } finally {
    await browser?.close();
  }
});

/** /docs renders every path of /openapi.json under its policy, from the gateway alone. */
async function runDocsScenario(page: Page, context: TestGateway) {
  const { problems, elsewhere } = watchPage(page, context.url);
  await page.goto(`${context.url}/docs`);
  await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
  const document = (await (await fetch(`${context.url}/openapi.json`)).json()) as { paths: object };
  const operations = Object.values(document.paths).reduce(
    (sum, methods) => sum + Object.keys(methods).length,
    0,
  );
  assert.equal(await page.locator(".opblock").count(), operations);
  // Grouped under the document's six tags, in its order.
  const tags = await page
    .locator("[data-tag]")
    .evaluateAll((elements) => elements.map((element) => element.getAttribute("data-tag")));
  assert.deepEqual([...new Set(tags)], ["generation", "catalog", "lookup", "keys", "admin", "operations"]);
  await page.locator(".opblock-summary-path", { hasText: "/internal/admin/workspaces/{id}/usage" }).waitFor();
  assert.deepEqual(problems, []);
  assert.deepEqual(elsewhere, []);
  page.removeAllListeners();
}

async function runConsoleScenario(page: Page, context: TestGateway) {
  // The wrong token's 401 is expected; anything else (a CSP violation included) is not.
  const { problems, elsewhere } = watchPage(page, context.url, /status of 401/);
  const markupWorkspace = await context.admin.createWorkspace({ name: MARKUP_NAME, creditsUsd: "1" });
  await context.admin.createKey({ workspaceId: context.workspaceId, name: SCRIPT_NAME });

  const pageResponse = await page.goto(`${context.url}/console`);
  const policy = pageResponse?.headers()["content-security-policy"] ?? "";
  assert.match(policy, /script-src 'self'(;|$)/);
  await page.waitForSelector("#token");
  assert.equal(new URL(page.url()).hash, "#/sign-in");

  // A wrong token is refused; the right one opens the workspace list.
  await page.fill("#token", "not-the-token");
  await page.click("form.sign-in button[type=submit]");
  await page.getByText("That token was refused.").waitFor();
  await page.fill("#token", context.gateway.internalSecret);
  await page.click("form.sign-in button[type=submit]");
  const workspaceRow = page.locator(`tr[data-workspace-id="${context.workspaceId}"]`);
  await workspaceRow.waitFor();
  assert.match(await workspaceRow.innerText(), /\$10\.00/);

  // A name made of markup is shown as the text it is.
  const markupRow = page.locator(`tr[data-workspace-id="${markupWorkspace.id}"] td.name`);
  assert.equal(await markupRow.innerText(), MARKUP_NAME);
  assert.equal(await page.locator("main img").count(), 0);

  // Create a key with limits and an allowlist; its secret is shown once.
  await workspaceRow.locator("a").click();
  await page.locator("tr[data-key-id]").first().waitFor();
  const scriptRow = page.locator("tr[data-key-id] td.name", { hasText: "window.__injected=2" });
  assert.equal(await scriptRow.innerText(), SCRIPT_NAME);
  await page.fill(".key-form input[name=name]", "from the browser");
  await page.fill(".key-form textarea[name=models]", TEST_MODEL);
  await page.fill(".key-form input[name=daily]", "1.50");
  await page.fill(".key-form input[name=rpm]", "120");
  await page.click(".key-form button[type=submit]");
  const secret = (await page.locator(".secret-card .secret").innerText()).trim();
  assert.match(secret, /^hi-/);
  const keyRow = page.locator("tr[data-key-id]", { hasText: "from the browser" });
  await keyRow.waitFor();
  const keyId = await keyRow.getAttribute("data-key-id");
  const created = await context.admin.getKey(keyId!);
  assert.deepEqual(created.key.allowedModels, [TEST_MODEL]);
  assert.equal(created.limits.dailyMicroUsd, 1_500_000);
  assert.equal(created.limits.requestsPerMinute, 120);
  await page.click(".secret-card button:text('Done')");
  assert.equal(await page.locator(".secret").count(), 0, "the secret is gone once dismissed");

  // Use the key through the API.
  const client = new OpenAI({ apiKey: secret, baseURL: `${context.url}/api/v1`, maxRetries: 0 });
  const { response } = await client.chat.completions
    .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] })
    .withResponse();
  const requestId = response.headers.get("x-request-id")!;

  // The request appears in the workspace's list with its cost (refreshing until it is written).
  await page.click(".tabs a:text('Requests')");
  const requestRow = page.locator(`tr[data-request-id="${requestId}"]`);
  for (let attempt = 0; (await requestRow.count()) === 0; attempt++) {
    assert.ok(attempt < 50, "the request did not appear in the list");
    await page.click("button.refresh");
    await page.waitForTimeout(100);
  }
  assert.equal(await requestRow.locator("td.cost").innerText(), REQUEST_COST_TEXT);
  assert.match(await requestRow.innerText(), /from the browser/);

  // The usage chart has today's bar of this model, at this cost.
  await page.click(".tabs a:text('Usage')");
  const record = await context.gateway.store.reports.findGeneration(requestId);
  const today = record!.createdAt.toISOString().slice(0, 10);
  const bar = page.locator(`.usage-chart g[data-day="${today}"] rect title`);
  await bar.waitFor({ state: "attached" });
  assert.equal(await bar.textContent(), `${today} · ${TEST_MODEL}: ${REQUEST_COST_TEXT}`);

  // Lookup by request id.
  await page.fill("nav input[name=request-id]", requestId);
  await page.click("nav .lookup button");
  await page.locator(".request-id", { hasText: requestId }).waitFor();
  assert.match(await page.locator("dl.facts").innerText(), new RegExp(`Cost\\s+\\${REQUEST_COST_TEXT}`));

  // The key's spend per window counts it.
  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/keys/${keyId}`);
  const daily = page.locator("tr[data-window=daily]");
  await daily.waitFor();
  assert.match(await daily.locator("td.spent").innerText(), /\$0\.00006/);

  // Disable it in the console; the next call is refused.
  await page.click(".key-head button:text('Disable')");
  await page.locator(".key-head .badge", { hasText: "disabled" }).waitFor();
  await assert.rejects(
    client.chat.completions.create({ model: TEST_MODEL, messages: [{ role: "user", content: "again" }] }),
    (error: unknown) => error instanceof OpenAI.AuthenticationError,
  );

  // Evaluated in the page (this file is type-checked without the DOM library).
  const leaked = await page.evaluate(
    "({ injected: window.__injected ?? null, local: localStorage.length, cookies: document.cookie })",
  );
  assert.deepEqual(leaked, { injected: null, local: 0, cookies: "" });
  assert.deepEqual(problems, [], "no script error and no Content-Security-Policy violation");
  assert.deepEqual(elsewhere, [], "the page requested nothing but the gateway");
}
