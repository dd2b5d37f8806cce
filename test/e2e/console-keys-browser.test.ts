/**
 * The console's key pages, audit log and playground in headless Chromium, in both runtime modes:
 * the key list shows each key's spend beside its limits (from one report call), a key's limits,
 * rate, allowlist and expiry are edited on its page (a bad value is refused with the API's message),
 * the audit log lists the change with who made it and pages through older entries, and the
 * playground streams a multi-turn chat through one-time playground keys, showing each turn's cost.
 * Throughout: no script error, no Content-Security-Policy violation, nothing requested elsewhere.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { signInToConsole, watchPage } from "../helpers/console-page.js";
import { buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { type HeadlessBrowser, launchChromium, requireChromium } from "../helpers/headless-chromium.js";
import { requireMode } from "../helpers/storage-modes.js";
import { GATEWAY_MODES, startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

// The fake upstream bills 10 prompt + 5 completion tokens; the test catalog charges $2/M and $8/M.
const REQUEST_COST_TEXT = "$0.00006";
const AUDIT_PAGE_SIZE = 25;

test("console key pages, audit log and playground in headless Chromium", { timeout: 180_000 }, async (t) => {
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
        const context = await startTestGateway(mode);
        const page = await browser!.context.newPage();
        const watch = watchPage(page, context.url, /status of 400/);
        try {
          await signInToConsole(page, context);
          const keyId = await runKeyListAndEditing(t, page, context);
          await t.test("audit log", () => runAuditLog(page, context, keyId));
          await t.test("playground", () => runPlayground(page, context));
          assert.deepEqual(watch.problems, [], "no script error and no Content-Security-Policy violation");
          assert.deepEqual(watch.elsewhere, [], "the page requested nothing but the gateway");
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

async function chat(context: TestGateway, apiKey: string) {
  await context.createClient(apiKey).chat.completions.create({
    model: TEST_MODEL,
    messages: [{ role: "user", content: "hi" }],
  });
}

async function runKeyListAndEditing(
  t: { test: (name: string, fn: () => Promise<void>) => Promise<void> },
  page: Page,
  context: TestGateway,
): Promise<string> {
  const { key, secret } = await context.admin.createKey({
    workspaceId: context.workspaceId,
    name: "limited",
    dailyLimitUsd: "1",
    totalLimitUsd: "20",
  });
  await chat(context, secret);
  await chat(context, secret);

  await t.test("the key list shows spend beside each limit, from one report call", async () => {
    const reports: string[] = [];
    const onRequest = (request: { url(): string }) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/internal/admin/")) reports.push(path);
    };
    page.on("request", onRequest);
    const row = page.locator(`tr[data-key-id="${key.id}"]`);
    // Records are written in batches: reload the list until both requests count.
    await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/keys`);
    for (let attempt = 0; ; attempt++) {
      await row.waitFor();
      if ((await row.locator("td[data-window=daily] .spent").innerText()) === "$0.00012") break;
      assert.ok(attempt < 40, "the key's spend did not reach the list");
      await page.waitForTimeout(100);
      await page.reload();
    }
    page.off("request", onRequest);
    assert.equal(await row.locator("td[data-window=daily]").innerText(), "$0.00012 / $1.00");
    assert.equal(await row.locator("td[data-window=monthly]").innerText(), "$0.00012");
    assert.equal(await row.locator("td[data-window=total]").innerText(), "$0.00012 / $20.00");
    assert.equal(
      await page.locator(`tr[data-key-id="${context.keyId}"] td[data-window=daily]`).innerText(),
      "$0.00",
    );
    // However many keys: the list, the spend report and the workspace, per load.
    const perLoad = reports.filter((path) => path.endsWith("/key-spend")).length;
    assert.ok(perLoad >= 1);
    assert.equal(
      reports.filter((path) => /\/keys\/[^/]+\/spend$/.test(path)).length,
      0,
      "no spend call per key",
    );
  });

  await t.test("a key's limits, rate, allowlist and expiry are edited on its page", async () => {
    await page.locator(`tr[data-key-id="${key.id}"] td.name a`).click();
    const form = page.locator("form.key-edit");
    await form.waitFor();
    assert.equal(await form.locator("input[name=daily]").inputValue(), "1");
    assert.equal(await form.locator("input[name=monthly]").inputValue(), "");

    // A bad value is refused with the API's message, naming the field.
    await form.locator("input[name=daily]").fill("-3");
    await form.locator("button[type=submit]").click();
    await form.locator(".notice.error", { hasText: "daily_limit_usd" }).waitFor();
    assert.equal((await context.admin.getKey(key.id)).limits.dailyMicroUsd, 1_000_000, "nothing changed");

    await form.locator("input[name=daily]").fill("2.5");
    await form.locator("input[name=total]").fill("");
    await form.locator("input[name=rpm]").fill("30");
    await form.locator("textarea[name=models]").fill(TEST_MODEL);
    await form.locator("input[name=expires]").fill("2031-06-30T12:00");
    await form.locator("input[name=actor]").fill("browser-op");
    await form.locator("button[type=submit]").click();
    await page.getByText("Key saved.").waitFor();

    const saved = await context.admin.getKey(key.id);
    assert.equal(saved.limits.dailyMicroUsd, 2_500_000);
    assert.equal(saved.limits.totalMicroUsd, null, "an emptied limit is cleared");
    assert.equal(saved.limits.monthlyMicroUsd, null);
    assert.equal(saved.limits.requestsPerMinute, 30);
    assert.deepEqual(saved.key.allowedModels, [TEST_MODEL]);
    const browserZoneExpiry = await page.evaluate("new Date('2031-06-30T12:00').toISOString()");
    assert.equal(saved.key.expiresAt?.toISOString(), browserZoneExpiry);
    // The page shows the key as it is now.
    await page.locator("tr[data-window=daily] td", { hasText: "$2.50" }).first().waitFor();
    assert.match(await page.locator(".key-head dl.facts").innerText(), /Rate limit\s+30 requests\/minute/);
    assert.equal(await page.locator("form.key-edit input[name=daily]").inputValue(), "2.5");
  });
  return key.id;
}

async function runAuditLog(page: Page, context: TestGateway, keyId: string) {
  await page.click("nav a:text('Audit log')");
  const first = page.locator("tr[data-audit-id]").first();
  await first.waitFor();
  assert.equal(await first.locator("td.actor").innerText(), "browser-op");
  assert.equal(await first.locator("td.action").innerText(), "Key changed");
  const changes = await first.locator("td.changes").innerText();
  assert.match(changes, /daily limit \$1\.00 → \$2\.50/);
  assert.match(changes, /total limit \$20\.00 → none/);
  assert.match(changes, /models every model → test\/chat-model/);
  assert.match(changes, /expiry never → 2031-06-30/);
  assert.equal(await first.locator("td a code").innerText(), keyId);

  // More entries than a page: Older shows the next ones, Newer goes back; none twice, newest first.
  for (let index = 0; index < AUDIT_PAGE_SIZE + 4; index++) {
    await context.admin.updateKey(context.keyId, {
      requestsPerMinute: 100 + index,
      actor: `script-${index}`,
    });
  }
  await page.goto(`${context.url}/console#/audit/${context.workspaceId}`);
  await page.locator("tr[data-audit-id] td.actor", { hasText: `script-${AUDIT_PAGE_SIZE + 3}` }).waitFor();
  const ids = async () =>
    (
      await page
        .locator("tr[data-audit-id]")
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-audit-id")))
    ).map(Number);
  const firstPage = await ids();
  assert.equal(firstPage.length, AUDIT_PAGE_SIZE);
  await page.click(".pager button.older");
  await page.locator(".pager .page-number", { hasText: "Page 2" }).waitFor();
  const secondPage = await ids();
  assert.equal(
    secondPage.length,
    8,
    "4 more scripted entries, the browser's edit and the 3 creations before it (the workspace and its keys)",
  );
  const all = [...firstPage, ...secondPage];
  assert.deepEqual(
    [...all].sort((a, b) => b - a),
    all,
    "newest first across pages",
  );
  assert.equal(new Set(all).size, all.length);
  assert.equal(await page.locator(".pager button.older").isDisabled(), true);
  await page.click(".pager button.newer");
  await page.locator(".pager .page-number", { hasText: "Page 1" }).waitFor();
  assert.deepEqual(await ids(), firstPage);
}

async function runPlayground(page: Page, context: TestGateway) {
  const streamed = () => fakeReply.sse(buildTextChunks(["Hello", " from", " the playground."]));
  context.upstream.enqueue(streamed());
  context.upstream.enqueue(streamed());
  const before = context.upstream.requests.length;
  await page.click("nav a:text('Playground')");
  await page.locator("select[name=model]").waitFor();
  await page.selectOption("select[name=workspace]", context.workspaceId);
  await page.selectOption("select[name=model]", TEST_MODEL);
  await page.fill("input[name=operator]", "olga");

  await page.fill("textarea[name=prompt]", "Hi there");
  await page.click(".composer button[type=submit]");
  const firstReply = page.locator(".turn.assistant").nth(0);
  await firstReply.locator(".turn-cost[data-cost-source=record]").waitFor();
  assert.equal(await firstReply.locator(".turn-text").innerText(), "Hello from the playground.");
  assert.match(
    await firstReply.locator(".turn-cost").innerText(),
    new RegExp(`^\\${REQUEST_COST_TEXT} · request`),
  );

  await page.fill("textarea[name=prompt]", "And again");
  await page.click(".composer button[type=submit]");
  const secondReply = page.locator(".turn.assistant").nth(1);
  await secondReply.locator(".turn-cost[data-cost-source=record]").waitFor();
  assert.equal(await page.locator(".conversation-total").innerText(), "2 turns, $0.00012 in all");

  // The second turn carried the whole conversation upstream.
  const sent = context.upstream.requests.slice(before).map((request) => request.body);
  assert.equal(sent.length, 2);
  assert.deepEqual(
    sent[1].messages.map((message: { role: string; content: string }) => [message.role, message.content]),
    [
      ["user", "Hi there"],
      ["assistant", "Hello from the playground."],
      ["user", "And again"],
    ],
  );
  // Each turn went through its own one-time playground key, labelled as such on the record.
  const requestLink = await secondReply.locator(".turn-cost a").getAttribute("href");
  const requestId = decodeURIComponent(requestLink!.split("/").pop()!);
  const record = await context.gateway.store.reports.findGeneration(requestId);
  assert.equal(record?.source, "playground");
  assert.equal(record?.workspaceId, context.workspaceId);
  const firstLink = await firstReply.locator(".turn-cost a").getAttribute("href");
  const firstRecord = await context.gateway.store.reports.findGeneration(
    decodeURIComponent(firstLink!.split("/").pop()!),
  );
  assert.notEqual(firstRecord?.apiKeyId, record?.apiKeyId, "a fresh key per turn");

  // "New conversation" starts over.
  await page.click("button.new-conversation");
  assert.equal(await page.locator(".turn").count(), 0);

  // The key list leaves the one-time keys out, and says so.
  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/keys`);
  await page.locator(".one-time-keys", { hasText: "2 one-time playground keys not listed." }).waitFor();
  assert.equal(await page.locator(`tr[data-key-id="${record!.apiKeyId}"]`).count(), 0);
}
