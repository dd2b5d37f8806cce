/**
 * `npm run console:screenshots`: screenshots of the web console's main pages for docs/console.md,
 * written to docs/console/*.png. Starts its own gateway (embedded, in memory) in front of a
 * loopback fake upstream, fills it with a few workspaces, keys and 30 days of requests, and drives
 * Debian's Chromium through the pages as an admin would. Needs /usr/bin/chromium
 * (`apt-get install -y chromium`); nothing leaves the machine.
 */
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { buildConfig } from "../src/config/load-config.js";
import type { GenerationStart } from "../src/engine/generation-record.js";
import { startGateway } from "../src/gateway.js";
import { createLogger } from "../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../src/storage/open-store.js";
import {
  buildChatCompletion,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../test/helpers/fake-openai-upstream.js";
import { createTestOutcome } from "../test/helpers/generation-records.js";
import { launchChromium } from "../test/helpers/headless-chromium.js";
import { shootAlertPages } from "./console-screenshots-alerts.js";
import { shootKeyPages } from "./console-screenshots-keys.js";

const OUTPUT = new URL("../docs/console/", import.meta.url).pathname;
const DAY_MS = 86_400_000;
/** Prices per 1M tokens (prompt, completion), as a catalog would list them. */
const MODELS: Array<[slug: string, prompt: string, completion: string]> = [
  ["anthropic/claude-sonnet-4.6", "3", "15"],
  ["openai/gpt-6-luna", "1.25", "10"],
  ["google/gemini-3.5-flash-lite", "0.1", "0.4"],
];

const upstream = await startFakeOpenAiUpstream();
upstream.setHandler(() =>
  fakeReply.json(
    buildChatCompletion({ usage: { prompt_tokens: 1200, completion_tokens: 350, total_tokens: 1550 } }),
  ),
);
const config = buildConfig(
  {
    providers: [
      { id: "fake", kind: "openai-compatible", base_url: upstream.baseUrl, api_key_env: "FAKE_KEY" },
      // Its key is never set: the providers page shows the route as unusable.
      { id: "backup", kind: "openai-compatible", base_url: upstream.baseUrl, api_key_env: "BACKUP_KEY" },
    ],
    models: MODELS.map(([slug, prompt, completion], index) => ({
      slug,
      name: slug,
      provider: { slug: slug.split("/")[0], name: slug.split("/")[0] },
      description: "",
      release_date: "2026-01-01",
      context_length: 200_000,
      max_output_tokens: 8192,
      pricing: { prompt, completion },
      features: ["tools", "streaming"],
      datacenter_locations: ["local"],
      routes: [
        { provider: "fake", model: `fake-model-${index + 1}` },
        ...(index === 0 ? [{ provider: "backup", model: "backup-model" }] : []),
      ],
    })),
  },
  { FAKE_KEY: "unused" },
);
const gateway = await startGateway({
  settings: {
    port: 0,
    host: "127.0.0.1",
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: "(screenshots)",
    internalSharedSecret: randomBytes(16).toString("hex"),
    logLevel: "silent",
    // The Alerts screenshots deliver to a loopback receiver; never set outside tests.
    alertWebhookAllowLoopback: true,
  },
  config,
  logger: createLogger("silent"),
  drainMs: 500,
});
const browser = await launchChromium({ viewport: { width: 1440, height: 900 } });

try {
  const { admin, store } = gateway;
  const acme = await admin.createWorkspace({ name: "acme", creditsUsd: "250" });
  await admin.createWorkspace({ name: "globex", creditsUsd: "40", invoicing: true });
  const initech = await admin.createWorkspace({ name: "initech", creditsUsd: "3.5" });
  await admin.updateWorkspace(initech.id, { locked: true });
  const production = await admin.createKey({
    workspaceId: acme.id,
    name: "production",
    models: MODELS.slice(0, 2).map(([slug]) => slug),
    dailyLimitUsd: "50",
    monthlyLimitUsd: "1000",
    requestsPerMinute: 600,
  });
  const staging = await admin.createKey({ workspaceId: acme.id, name: "staging", dailyLimitUsd: "5" });
  const ci = await admin.createKey({ workspaceId: acme.id, name: "ci" });
  await admin.setKeyStatus(ci.key.id, "disabled");
  const laptop = await admin.createKey({ workspaceId: acme.id, name: "old-laptop" });
  await admin.setKeyStatus(laptop.key.id, "revoked");

  // 30 days of history, written as usage records (a deterministic, uneven pattern).
  const now = Date.now();
  let sequence = 0;
  for (let daysAgo = 29; daysAgo >= 1; daysAgo--) {
    for (const [index, [slug, prompt, completion]] of MODELS.entries()) {
      const count = Math.max(0, Math.round(6 + 5 * Math.sin((daysAgo + index * 7) / 3) - index * 2));
      for (let request = 0; request < count; request++) {
        const tokensPrompt = 800 + ((sequence * 37) % 2400);
        const tokensCompletion = 150 + ((sequence * 53) % 900);
        const cost = Math.round(tokensPrompt * Number(prompt) + tokensCompletion * Number(completion));
        // Now and then a timeout, more of them on some days: the error-rate chart has a shape.
        const failed = (sequence * 7 + daysAgo) % (daysAgo % 6 === 0 ? 5 : 17) === 0;
        const latencyMs = 400 + request * 90 + ((sequence * 131) % 700) + index * 250;
        const start: GenerationStart = {
          id: `seed-${sequence++}`,
          workspaceId: acme.id,
          apiKeyId: (request % 3 === 0 ? staging : production).key.id,
          model: slug,
          ingressFormat: request % 2 === 0 ? "chat_completions" : "responses",
          source: "api",
          stream: request % 2 === 1,
          createdAt: new Date(now - daysAgo * DAY_MS - request * 600_000),
          ...(request % 4 === 1 ? { sessionId: `session-${daysAgo}`, client: "claude-cli/2.1.332" } : {}),
        };
        await store.generations.finish(
          start.id,
          createTestOutcome({
            ...(failed
              ? { status: "error", errorCode: "provider_timeout", tokensPrompt: 0, tokensCompletion: 0 }
              : { costMicroUsd: cost, tokensPrompt, tokensCompletion }),
            latencyMs,
            upstreamProvider: "fake",
            upstreamModel: `fake-model-${index + 1}`,
            attempts: [
              {
                provider: "fake",
                model: slug,
                upstreamModel: `fake-model-${index + 1}`,
                outcome: failed ? "provider_timeout" : "ok",
                latencyMs,
              },
            ],
          }),
          start,
        );
      }
    }
  }
  // Today: real requests through the API, one of them refused upstream.
  upstream.enqueue(fakeReply.error(429, { error: { message: "Rate limit reached", type: "requests" } }));
  for (const [slug] of MODELS.slice(0, 2)) {
    for (let index = 0; index < 3; index++) {
      const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${production.secret}`, "Content-Type": "application/json" },
        body: JSON.stringify({ model: slug, messages: [{ role: "user", content: "Hello" }] }),
      });
      await response.arrayBuffer();
    }
  }

  // The third model's upstream fails until its breaker opens on this instance: five failures
  // (the default breaker_failures), spent by three requests of two attempts each at most.
  for (let index = 0; index < 5; index++) {
    upstream.enqueue(
      fakeReply.error(503, { error: { message: "Service unavailable", type: "server_error" } }),
    );
  }
  for (let index = 0; index < 3; index++) {
    const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${staging.secret}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: MODELS[2][0], messages: [{ role: "user", content: "Hello" }] }),
    });
    await response.arrayBuffer();
  }

  await mkdir(OUTPUT, { recursive: true });
  const page = await browser.context.newPage();
  page.on("pageerror", (error) => console.error("page error:", error.message));
  /** Long pages (tables of requests) are shot as far as the window shows. */
  const shoot = async (name: string, fullPage = true) => {
    await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage });
    console.error(`docs/console/${name}.png`);
  };

  await page.goto(`${gateway.url}/console`);
  await page.waitForSelector("#token");
  await shoot("sign-in");
  await page.fill("#token", gateway.internalSecret);
  await page.click("button[type=submit]");
  await page.waitForSelector(`tr[data-workspace-id="${acme.id}"]`);
  await shoot("workspaces");

  await page.click(`tr[data-workspace-id="${acme.id}"] a`);
  await page.waitForSelector("tr[data-key-id]");
  await page.fill(".key-form input[name=name]", "batch-jobs");
  await page.fill(".key-form textarea[name=models]", MODELS[2][0]);
  await page.fill(".key-form input[name=daily]", "2.50");
  await page.click(".key-form button[type=submit]");
  await page.waitForSelector(".secret");
  await shoot("keys");

  await page.click(`tr[data-key-id="${production.key.id}"] td.name a`);
  await page.waitForSelector("tr[data-window=daily]");
  await shoot("key", false);

  await page.click(".tabs a:text('Usage')");
  await page.waitForSelector(".usage-chart");
  await page.waitForSelector(".latency-chart");
  await shoot("usage");

  await page.click(".tabs a:text('Requests')");
  await page.waitForSelector("tr[data-request-id]");
  await shoot("requests", false);

  await page.selectOption(".activity-filters select[name=status]", "error");
  await page.click(".activity-filters button[type=submit]");
  // Evaluated in the page (this file is type-checked without the DOM library).
  await page.waitForFunction(
    `[...document.querySelectorAll(".activity-results tr[data-request-id]")].every((row) => /error/.test(row.textContent))`,
  );
  await shoot("requests-filtered", false);

  await page.click("tr[data-request-id] td a");
  await page.waitForSelector(".request-id");
  await shoot("request");

  await page.click("nav a:text('Providers')");
  await page.waitForSelector("td.breaker");
  await shoot("providers");
  await shootKeyPages({
    page,
    gateway,
    upstream,
    workspaceId: acme.id,
    keyId: production.key.id,
    model: MODELS[0][0],
    shoot,
    shootElement: async (name, selector) => {
      await page.locator(selector).screenshot({ path: join(OUTPUT, `${name}.png`) });
      console.error(`docs/console/${name}.png`);
    },
  });
  await shootAlertPages({
    page,
    gateway,
    upstream,
    workspaceId: acme.id,
    model: MODELS[1][0],
    shoot,
    shootElement: async (name, selector) => {
      await page.locator(selector).screenshot({ path: join(OUTPUT, `${name}.png`) });
      console.error(`docs/console/${name}.png`);
    },
  });
} finally {
  await browser.close();
  await gateway.close();
  await upstream.close();
}
