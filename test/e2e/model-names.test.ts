/**
 * Model names end to end: the shipped catalog (config/gateway.yaml) behind a real gateway, its
 * providers pointed at loopback fakes of their wire formats, driven by the official `openai` and
 * `@anthropic-ai/sdk` clients with the names clients send by default — Claude Code 2.1.332's ids
 * and picks, Codex 0.171's default, the providers' own ids. Every answer, streamed or not and in
 * each format, names the catalog slug that served; the generation record stores the slug; the key
 * allowlist judges the slug; an unknown name is refused with the closest names.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { parse as parseYaml } from "yaml";
import { buildConfig } from "../../src/config/load-config.js";
import { DEFAULT_CONFIG_PATH, type Settings } from "../../src/config/settings.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { startFakeAnthropicUpstream } from "../helpers/fake-anthropic-upstream.js";
import { startFakeGoogleUpstream } from "../helpers/fake-google-upstream.js";
import { startFakeOpenAiResponsesUpstream } from "../helpers/fake-openai-responses-upstream.js";
import type { FakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";

interface Harness {
  gateway: RunningGateway;
  url: string;
  apiKey: string;
  openai: OpenAI;
  anthropic: Anthropic;
  fakes: Record<"openai" | "anthropic" | "google", FakeOpenAiUpstream>;
  close(): Promise<void>;
}

/** The shipped catalog with each provider's base URL replaced by a fake of its wire format. */
async function startShippedCatalogGateway(): Promise<Harness> {
  const fakes = {
    openai: await startFakeOpenAiResponsesUpstream(),
    anthropic: await startFakeAnthropicUpstream(),
    google: await startFakeGoogleUpstream(),
  };
  const closeFakes = () => Promise.all(Object.values(fakes).map((fake) => fake.close()));
  const file = parseYaml(readFileSync(DEFAULT_CONFIG_PATH, "utf8")) as {
    providers: Array<{ id: keyof typeof fakes; base_url: string }>;
  };
  for (const provider of file.providers) provider.base_url = fakes[provider.id].baseUrl;
  const config = buildConfig(file, {
    OPENAI_API_KEY: "sk-openai-upstream",
    ANTHROPIC_API_KEY: "sk-ant-upstream",
    GEMINI_API_KEY: "gemini-upstream",
  });
  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: undefined,
    redisUrl: undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: DEFAULT_CONFIG_PATH,
    internalSharedSecret: `names-${randomBytes(8).toString("hex")}`,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
  };
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      settings,
      config,
      logger: createLogger(settings.logLevel),
      drainMs: 500,
      statePrefix: `names:${randomBytes(6).toString("hex")}:`,
    });
  } catch (error) {
    await closeFakes();
    throw error;
  }
  const workspace = await gateway.admin.createWorkspace({ name: "names", creditsUsd: "100" });
  const { secret } = await gateway.admin.createKey({ workspaceId: workspace.id, name: "names" });
  return {
    gateway,
    url: gateway.url,
    apiKey: secret,
    openai: new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/api/v1`, maxRetries: 0 }),
    anthropic: new Anthropic({ apiKey: secret, baseURL: `${gateway.url}/api`, maxRetries: 0 }),
    fakes,
    async close() {
      await gateway.close();
      await closeFakes();
    },
  };
}

async function readRecordedModel(harness: Harness, requestId: string | null): Promise<unknown> {
  assert.ok(requestId, "the answer carries X-Request-Id");
  const response = await fetch(`${harness.url}/api/v1/generation?id=${encodeURIComponent(requestId)}`, {
    headers: { Authorization: `Bearer ${harness.apiKey}` },
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { data: { model: unknown } }).data.model;
}

/** The model of the upstream request the fake received last. */
function lastUpstreamModel(fake: FakeOpenAiUpstream): unknown {
  return fake.requests.at(-1)?.body?.model;
}

const hello = "Say hello.";

test("model names: the shipped catalog answers the names clients send by default", async (t) => {
  const harness = await startShippedCatalogGateway();
  t.after(() => harness.close());

  await t.test("messages: Claude Code's default ids and picks, streamed and not", async () => {
    const cases: Array<[string, string, string]> = [
      ["claude-opus-5-5", "anthropic/claude-opus-5.5", "claude-opus-5-5"],
      ["claude-sonnet-5-5", "anthropic/claude-sonnet-5.5", "claude-sonnet-5-5"],
      ["claude-haiku-5-5", "anthropic/claude-haiku-5.5", "claude-haiku-5-5"],
      ["opus", "anthropic/claude-opus-5.5", "claude-opus-5-5"],
      ["sonnet", "anthropic/claude-sonnet-5.5", "claude-sonnet-5-5"],
      ["haiku", "anthropic/claude-haiku-5.5", "claude-haiku-5-5"],
    ];
    for (const [name, slug, upstreamModel] of cases) {
      const { data, response } = await harness.anthropic.messages
        .create({ model: name, max_tokens: 64, messages: [{ role: "user", content: hello }] })
        .withResponse();
      assert.equal(data.model, slug, name);
      assert.equal(lastUpstreamModel(harness.fakes.anthropic), upstreamModel, name);
      assert.equal(await readRecordedModel(harness, response.headers.get("x-request-id")), slug, name);

      const { data: stream, response: streamed } = await harness.anthropic.messages
        .create({ model: name, max_tokens: 64, stream: true, messages: [{ role: "user", content: hello }] })
        .withResponse();
      let started: string | undefined;
      for await (const event of stream) if (event.type === "message_start") started = event.message.model;
      assert.equal(started, slug, `${name} streamed`);
      assert.equal(await readRecordedModel(harness, streamed.headers.get("x-request-id")), slug, name);
    }
  });

  await t.test("chat completions: bare names of each provider, streamed and not", async () => {
    const cases: Array<[string, string, FakeOpenAiUpstream, string]> = [
      ["gpt-6.2-sol", "openai/gpt-6.2-sol", harness.fakes.openai, "gpt-6.2-sol"],
      ["claude-sonnet-4-6", "anthropic/claude-sonnet-4.6", harness.fakes.anthropic, "claude-sonnet-4-6"],
      ["gemini-3.8-flash", "google/gemini-3.8-flash", harness.fakes.google, ""],
      ["claude-opus-5-5", "anthropic/claude-opus-5.5", harness.fakes.anthropic, "claude-opus-5-5"],
    ];
    for (const [name, slug, fake, upstreamModel] of cases) {
      const { data, response } = await harness.openai.chat.completions
        .create({ model: name, messages: [{ role: "user", content: hello }] })
        .withResponse();
      assert.equal(data.model, slug, name);
      // Gemini names the model in the URL, not the body.
      if (upstreamModel !== "") assert.equal(lastUpstreamModel(fake), upstreamModel, name);
      else assert.match(fake.requests.at(-1)?.path ?? "", /gemini-3\.8-flash/);
      assert.equal(await readRecordedModel(harness, response.headers.get("x-request-id")), slug, name);

      const { data: stream, response: streamed } = await harness.openai.chat.completions
        .create({ model: name, stream: true, messages: [{ role: "user", content: hello }] })
        .withResponse();
      const models = new Set<string>();
      for await (const chunk of stream) models.add(chunk.model);
      assert.deepEqual([...models], [slug], `${name} streamed`);
      assert.equal(await readRecordedModel(harness, streamed.headers.get("x-request-id")), slug, name);
    }
  });

  await t.test("responses: Codex's default and Claude Code's ids, streamed and not", async () => {
    for (const [name, slug] of [
      ["gpt-6.2-sol", "openai/gpt-6.2-sol"],
      ["claude-opus-5-5", "anthropic/claude-opus-5.5"],
      ["sonnet", "anthropic/claude-sonnet-5.5"],
    ]) {
      const { data, response } = await harness.openai.responses
        .create({ model: name, input: hello })
        .withResponse();
      assert.equal(data.model, slug, name);
      assert.equal(await readRecordedModel(harness, response.headers.get("x-request-id")), slug, name);

      const { data: stream, response: streamed } = await harness.openai.responses
        .create({ model: name, input: hello, stream: true })
        .withResponse();
      const models = new Set<string>();
      for await (const event of stream) {
        if (event.type === "response.created" || event.type === "response.completed") {
          models.add(event.response.model);
        }
      }
      assert.deepEqual([...models], [slug], `${name} streamed`);
      assert.equal(await readRecordedModel(harness, streamed.headers.get("x-request-id")), slug, name);
    }
  });

  await t.test(
    "an unknown name is invalid_request 400 with the closest catalog names, in each format",
    async () => {
      const chat = await harness.openai.chat.completions
        .create({ model: "claude-sonnet-4-7", messages: [{ role: "user", content: hello }] })
        .catch((error: unknown) => error);
      assert.ok(chat instanceof OpenAI.BadRequestError, String(chat));
      assert.equal((chat.error as { code?: string }).code, "invalid_request");
      assert.equal((chat.error as { param?: string }).param, "model");
      assert.match(chat.message, /Unknown model "claude-sonnet-4-7"/);
      assert.match(chat.message, /claude-sonnet-4-6 \(anthropic\/claude-sonnet-4\.6\)/);

      const messages = await harness.anthropic.messages
        .create({ model: "claude-opus-6", max_tokens: 16, messages: [{ role: "user", content: hello }] })
        .catch((error: unknown) => error);
      assert.ok(messages instanceof Anthropic.BadRequestError, String(messages));
      assert.match(messages.message, /closest catalog names: claude-opus-/);

      const responses = await harness.openai.responses
        .create({ model: "gpt-6.2-soll", input: hello })
        .catch((error: unknown) => error);
      assert.ok(responses instanceof OpenAI.BadRequestError, String(responses));
      assert.match(responses.message, /gpt-6\.2-sol \(openai\/gpt-6\.2-sol\)/);
    },
  );

  await t.test("the key allowlist judges the slug a name resolves to", async () => {
    const workspace = await harness.gateway.admin.createWorkspace({ name: "pinned", creditsUsd: "10" });
    const { secret } = await harness.gateway.admin.createKey({
      workspaceId: workspace.id,
      models: ["anthropic/claude-sonnet-4.6"],
    });
    const pinned = new OpenAI({ apiKey: secret, baseURL: `${harness.url}/api/v1`, maxRetries: 0 });
    const allowed = await pinned.chat.completions.create({
      model: "claude-sonnet-4-6",
      messages: [{ role: "user", content: hello }],
    });
    assert.equal(allowed.model, "anthropic/claude-sonnet-4.6");
    // `sonnet` is the newest Sonnet, not the pinned one.
    const refused = await pinned.chat.completions
      .create({ model: "sonnet", messages: [{ role: "user", content: hello }] })
      .catch((error: unknown) => error);
    assert.ok(refused instanceof OpenAI.PermissionDeniedError, String(refused));
    assert.equal((refused.error as { code?: string }).code, "model_not_allowed");
    assert.match(refused.message, /anthropic\/claude-sonnet-5\.5" \(requested as "sonnet"\)/);
  });

  await t.test(
    "GET /api/v1/models lists each model's aliases; one model is found by any of its names",
    async () => {
      const list = (await (await fetch(`${harness.url}/api/v1/models`)).json()) as {
        data: Array<{ id: string; slug: string; aliases: string[] }>;
      };
      const opus = list.data.find((entry) => entry.slug === "anthropic/claude-opus-5.5");
      assert.deepEqual(opus?.aliases, ["claude-opus-5-5", "opus"]);
      for (const entry of list.data) assert.ok(Array.isArray(entry.aliases), entry.slug);

      const found = await harness.openai.models.retrieve("claude-opus-5-5");
      assert.equal(found.id, "anthropic/claude-opus-5.5");
      const missing = await fetch(`${harness.url}/api/v1/models/claude-opus-6`);
      assert.equal(missing.status, 404);
      // This route needs no key: an unknown name gets a plain 404, no suggestions computed.
      assert.match(
        ((await missing.json()) as { error: { message: string } }).error.message,
        /^No model "claude-opus-6" in the catalog$/,
      );
    },
  );

  await t.test("count_tokens takes the same names", async () => {
    const counted = await harness.anthropic.messages.countTokens({
      model: "claude-sonnet-5-5",
      messages: [{ role: "user", content: hello }],
    });
    assert.ok(counted.input_tokens > 0);
  });
});
