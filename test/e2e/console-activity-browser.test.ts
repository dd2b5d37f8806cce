/**
 * The console's activity log, latency and error charts and providers page in headless Chromium,
 * in both runtime modes: filters (status, key, session, model, error code, time range) that hold
 * across pages and a reload, paging older and newer without a row lost or repeated, the CSV
 * download of the filter, a request page whose attempts have human headings and whose session
 * links to its requests, the latency and error-rate lines of the usage tab, and each route's key
 * status and breaker state (a breaker the test opens shows open). The page runs under its policy,
 * talking only to the gateway.
 */

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import type { Page } from "playwright-core";
import type { GenerationStart } from "../../src/engine/generation-record.js";
import { signInToConsole, watchPage } from "../helpers/console-page.js";
import { fakeReply } from "../helpers/fake-openai-upstream.js";
import { createTestOutcome } from "../helpers/generation-records.js";
import { type HeadlessBrowser, launchChromium, requireChromium } from "../helpers/headless-chromium.js";
import { requireMode } from "../helpers/storage-modes.js";
import {
  createTestConfigFile,
  GATEWAY_MODES,
  OTHER_MODEL,
  startTestGateway,
  TEST_MODEL,
  type TestGateway,
} from "../helpers/test-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: a config file built field by field.
type Json = any;

const ROWS = 130;
const SESSION = "session-7f3a";

test("console activity log, charts and providers in headless Chromium", { timeout: 240_000 }, async (t) => {
  if (!requireChromium(t)) return;
  let browser: HeadlessBrowser | undefined;
  try {
    browser = await launchChromium({ viewport: { width: 1400, height: 900 } });
    for (const mode of GATEWAY_MODES) {
      await t.test(`filter, page, export, charts and routes [${mode}]`, async (t) => {
        if (
          mode === "distributed" &&
          (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis")))
        ) {
          return;
        }
        const context = await startTestGateway(mode, {
          configOverrides: (upstream) => {
            const file = createTestConfigFile(upstream) as Json;
            file.providers.push({
              id: "spare",
              kind: "openai-compatible",
              base_url: upstream,
              api_key_env: "HI_TEST_SPARE_KEY_NEVER_SET",
            });
            file.models[0].routes.push({ provider: "spare", model: "spare-model" });
            return {
              providers: file.providers,
              models: file.models,
              routing: { retries: 0, breaker_failures: 2, breaker_cooldown_seconds: 600 },
            };
          },
        });
        const page = await browser!.context.newPage();
        try {
          await runScenario(page, context);
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

interface Seeded {
  id: string;
  at: number;
  keyId: string;
  model: string;
  status: "ok" | "error";
  latencyMs: number;
}

async function seed(context: TestGateway, otherKeyId: string): Promise<Seeded[]> {
  const now = Date.now();
  const rows: Seeded[] = Array.from({ length: ROWS }, (_, i) => ({
    id: `ui-${String(i).padStart(4, "0")}`,
    // One request every 15 minutes over the last day and a half.
    at: now - 36 * 3_600_000 + i * 900_000,
    keyId: i % 3 === 0 ? otherKeyId : context.keyId,
    model: i % 4 === 0 ? OTHER_MODEL : TEST_MODEL,
    status: i % 10 === 0 ? ("error" as const) : ("ok" as const),
    latencyMs: 200 + ((i * 53) % 700),
  })).filter((row) => row.at < now);
  await Promise.all(
    rows.map((row, i) => {
      const start: GenerationStart = {
        id: row.id,
        workspaceId: context.workspaceId,
        apiKeyId: row.keyId,
        model: row.model,
        ingressFormat: "chat_completions",
        source: "api",
        stream: false,
        createdAt: new Date(row.at),
        ...(i % 20 === 5 ? { sessionId: SESSION, client: "claude-cli/2.1.0" } : {}),
      };
      const attempts =
        row.status === "error"
          ? [
              {
                provider: "fake",
                model: row.model,
                upstreamModel: "fake-upstream-model",
                outcome: "provider_timeout",
                latencyMs: row.latencyMs,
              },
            ]
          : [
              {
                provider: "fake",
                model: row.model,
                upstreamModel: "fake-upstream-model",
                outcome: "ok",
                latencyMs: row.latencyMs,
              },
            ];
      return context.gateway.store.generations.finish(
        row.id,
        createTestOutcome({
          status: row.status,
          errorCode: row.status === "error" ? "provider_timeout" : null,
          latencyMs: row.latencyMs,
          costMicroUsd: 60,
          attempts,
        }),
        start,
      );
    }),
  );
  return rows.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
}

const visibleIds = (page: Page) =>
  page
    .locator(".activity-results tr[data-request-id]")
    .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-request-id")));

/** Waits until the table shows exactly `ids` (a page is rendered after its answer arrives). */
async function expectRows(page: Page, ids: string[], what: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const shown = await visibleIds(page);
    if (JSON.stringify(shown) === JSON.stringify(ids)) return;
    if (Date.now() > deadline) assert.deepEqual(shown, ids, what);
    await page.waitForTimeout(50);
  }
}

async function runScenario(page: Page, context: TestGateway) {
  const { problems, elsewhere } = watchPage(page, context.url);
  const other = await context.admin.createKey({ workspaceId: context.workspaceId, name: "batch jobs" });
  const rows = await seed(context, other.key.id);

  await signInToConsole(page, context);

  // Unfiltered: the newest 50, then the next 50 and back.
  await page.goto(`${context.url}/console#/workspaces/${context.workspaceId}/requests`);
  const ids = rows.map((row) => row.id);
  await expectRows(page, ids.slice(0, 50), "first page");
  await page.click(".pager button.older");
  await expectRows(page, ids.slice(50, 100), "second page");
  await page.click(".pager button.older");
  await expectRows(page, ids.slice(100), "last page");
  assert.equal(await page.locator(".pager button.older").isDisabled(), true, "no page after the last");
  await page.click(".pager button.newer");
  await expectRows(page, ids.slice(50, 100), "back to the second page");

  // Status and key together; the filter is in the address and survives a reload.
  await page.selectOption(".activity-filters select[name=status]", "error");
  await page.selectOption(".activity-filters select[name=key_id]", other.key.id);
  await page.click(".activity-filters button[type=submit]");
  const failedOfOther = rows.filter((row) => row.status === "error" && row.keyId === other.key.id);
  await expectRows(
    page,
    failedOfOther.map((row) => row.id),
    "errors of the other key",
  );
  assert.match(await page.locator(".activity-results tbody").innerText(), /batch jobs/);
  const hash = new URL(page.url()).hash;
  assert.match(hash, /status=error/);
  assert.match(hash, new RegExp(`key_id=${other.key.id}`));
  await page.reload();
  await expectRows(
    page,
    failedOfOther.map((row) => row.id),
    "the same filter after a reload",
  );
  assert.equal(await page.locator(".activity-filters select[name=status]").inputValue(), "error");

  // The CSV download of that filter holds exactly those rows.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("button.export-csv")]);
  assert.match(download.suggestedFilename(), /^requests-.*\.csv$/);
  const csv = (await readFile((await download.path())!, "utf8")).trim().split("\r\n");
  assert.equal(csv[0].split(",")[0], "id");
  assert.deepEqual(
    csv.slice(1).map((line) => line.split(",")[0]),
    failedOfOther.map((row) => row.id),
  );

  // Model alone (Clear first).
  await page.click(".activity-filters button.clear");
  await expectRows(page, ids.slice(0, 50), "cleared");
  await page.fill(".activity-filters input[name=model]", OTHER_MODEL);
  await page.click(".activity-filters button[type=submit]");
  await expectRows(
    page,
    rows.filter((row) => row.model === OTHER_MODEL).map((row) => row.id),
    "one model",
  );

  // A time range (read as UTC, to the minute), then an error code within it: the range leaves
  // seeded rows out on both sides, the error code leaves out the successful ones inside it.
  await page.click(".activity-filters button.clear");
  await expectRows(page, ids.slice(0, 50), "cleared again");
  const oldestFirst = [...rows].reverse();
  // Each bound midway between two seeded requests (15 minutes apart), so its minute is no row's.
  const between = (index: number) => {
    const at = (oldestFirst[index].at + oldestFirst[index + 1].at) / 2;
    return new Date(at).toISOString().slice(0, 16);
  };
  const since = between(40);
  const until = between(79);
  const sinceMs = Date.parse(`${since}:00Z`);
  const untilMs = Date.parse(`${until}:00Z`);
  const inRange = rows.filter((row) => row.at >= sinceMs && row.at < untilMs);
  assert.equal(inRange.length, 39, "the range holds the 41st to the 79th seeded request");
  await page.fill(".activity-filters input[name=since]", since);
  await page.fill(".activity-filters input[name=until]", until);
  await page.click(".activity-filters button[type=submit]");
  await expectRows(
    page,
    inRange.map((row) => row.id),
    "the time range",
  );
  const timedOut = inRange.filter((row) => row.status === "error");
  const allTimedOut = rows.filter((row) => row.status === "error");
  assert.ok(timedOut.length > 0, "some failed requests in the range");
  assert.ok(
    allTimedOut.some((row) => row.at < sinceMs) && allTimedOut.some((row) => row.at >= untilMs),
    "failed requests before and after the range, which the filter leaves out",
  );
  await page.fill(".activity-filters input[name=error_code]", "provider_timeout");
  await page.click(".activity-filters button[type=submit]");
  await expectRows(
    page,
    timedOut.map((row) => row.id),
    "one error code in the time range",
  );
  const rangeHash = new URLSearchParams(new URL(page.url()).hash.split("?")[1]);
  assert.equal(rangeHash.get("error_code"), "provider_timeout");
  assert.equal(rangeHash.get("since"), `${since}:00Z`);
  assert.equal(rangeHash.get("until"), `${until}:00Z`);
  await page.reload();
  await expectRows(
    page,
    timedOut.map((row) => row.id),
    "the same range and error code after a reload",
  );
  assert.equal(await page.locator(".activity-filters input[name=since]").inputValue(), since);
  assert.equal(await page.locator(".activity-filters input[name=until]").inputValue(), until);
  assert.equal(
    await page.locator(".activity-filters input[name=error_code]").inputValue(),
    "provider_timeout",
  );
  // Another error code: none of the seeded requests.
  await page.fill(".activity-filters input[name=error_code]", "provider_auth");
  await page.click(".activity-filters button[type=submit]");
  await expectRows(page, [], "an error code no request has");

  // A failed request's page: human headings, no raw field names, the attempt's outcome.
  const failed = rows.find((row) => row.status === "error")!;
  await page.goto(`${context.url}/console#/requests/${failed.id}`);
  await page.locator(".request-id", { hasText: failed.id }).waitFor();
  const headings = await page.locator("table thead th").allTextContents();
  assert.deepEqual(headings, [
    "#",
    "Provider",
    "Catalog model",
    "Upstream model",
    "Outcome",
    "Latency",
    "Fields dropped",
  ]);
  assert.equal(headings.filter((heading) => heading.includes("_")).length, 0);
  const attempt = await page.locator("tr.attempt").innerText();
  assert.match(attempt, /provider_timeout/);
  assert.match(attempt, new RegExp(`${failed.latencyMs} ms`));

  // A request of a session links to the session's requests.
  const inSession = rows.filter((row) => Number(row.id.slice(3)) % 20 === 5);
  await page.goto(`${context.url}/console#/requests/${inSession[0].id}`);
  await page.locator("a.session-link").click();
  await expectRows(
    page,
    inSession.map((row) => row.id),
    "the session's requests",
  );
  assert.equal(await page.locator(".activity-filters input[name=session_id]").inputValue(), SESSION);

  // Usage tab: a latency line and an error-rate line per model; the points of a day in the middle of the seeded span (at least 16 hours of it) as the rows say.
  await page.click(".tabs a:text('Usage')");
  const day = new Date(rows[Math.floor(rows.length / 2)].at).toISOString().slice(0, 10);
  const ofDay = rows.filter(
    (row) => new Date(row.at).toISOString().slice(0, 10) === day && row.model === TEST_MODEL,
  );
  const okLatencies = ofDay
    .filter((row) => row.status === "ok")
    .map((row) => row.latencyMs)
    .sort((a, b) => a - b);
  const middle = (okLatencies.length - 1) / 2;
  const p50 = Math.round((okLatencies[Math.floor(middle)] + okLatencies[Math.ceil(middle)]) / 2);
  const latencyPoint = page.locator(
    `.latency-chart g[data-model="${TEST_MODEL}"] circle[data-day="${day}"] title`,
  );
  await latencyPoint.waitFor({ state: "attached" });
  assert.equal(
    await latencyPoint.textContent(),
    `${day} · ${TEST_MODEL}: ${p50.toLocaleString("en-US")} ms (${ofDay.length} requests)`,
  );
  const errorRate = (100 * ofDay.filter((row) => row.status === "error").length) / ofDay.length;
  const errorPoint = page.locator(
    `.error-chart g[data-model="${TEST_MODEL}"] circle[data-day="${day}"] title`,
  );
  assert.equal(
    await errorPoint.textContent(),
    `${day} · ${TEST_MODEL}: ${errorRate.toFixed(errorRate < 10 && errorRate !== 0 ? 1 : 0)}% (${ofDay.length} requests)`,
  );
  await page.click(".performance .segmented button:text('p95')");
  await page.locator(".latency-chart[aria-label^='latency_p95_ms']").waitFor();

  // Providers: the key status of each route, and a breaker this test opens.
  await page.click("nav a:text('Providers')");
  const route = page.locator(`tr[data-model="${TEST_MODEL}"][data-route="fake/fake-upstream-model"]`);
  await route.waitFor();
  assert.match(await route.locator("td.key").innerText(), /set\s+FAKE_UPSTREAM_KEY/);
  assert.equal(await route.locator("td.breaker").innerText(), "closed");
  const spare = page.locator(`tr[data-route="spare/spare-model"]`);
  assert.match(await spare.locator("td.key").innerText(), /missing\s+HI_TEST_SPARE_KEY_NEVER_SET/);
  assert.equal(await page.locator(".instance-list li").count(), 1);
  assert.doesNotMatch(await page.locator("main").innerText(), /sk-upstream-secret/);
  for (let i = 0; i < 2; i++) {
    context.upstream.enqueue(fakeReply.error(500, { error: { message: "down" } }));
    await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] })
      .catch(() => {});
  }
  await page.click("button.refresh");
  await route.locator("td.breaker", { hasText: "open" }).waitFor();
  assert.equal(
    await page.locator(`tr[data-model="${OTHER_MODEL}"] td.breaker`).innerText(),
    "closed",
    "another upstream model's route stays closed",
  );

  assert.deepEqual(problems, [], "no script error and no Content-Security-Policy violation");
  assert.deepEqual(elsewhere, [], "the page requested nothing but the gateway");
}
