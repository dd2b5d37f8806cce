/**
 * The demo catalog (config/demo.yaml) behind a real gateway: every format answers, streamed and
 * not, through the official clients, with a deterministic echo made in the gateway; a forced tool
 * call comes back as a tool call; usage is metered and billed like any other model's. The shipped
 * catalog never contains a demo provider.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { loadConfigFile } from "../../src/config/load-config.js";
import type { Settings } from "../../src/config/settings.js";
import { DEFAULT_CONFIG_PATH } from "../../src/config/settings.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";

const DEMO_CONFIG_PATH = new URL("../../config/demo.yaml", import.meta.url).pathname;
let gateway: RunningGateway;
let apiKey: string;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: undefined,
    redisUrl: undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: DEMO_CONFIG_PATH,
    internalSharedSecret: `demo-${randomBytes(8).toString("hex")}`,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
  };
  gateway = await startGateway({
    settings,
    config: loadConfigFile(DEMO_CONFIG_PATH, {}),
    logger: createLogger(settings.logLevel),
    drainMs: 500,
  });
  const workspace = await gateway.admin.createWorkspace({ name: "demo", creditsUsd: "1" });
  apiKey = (await gateway.admin.createKey({ workspaceId: workspace.id, name: "demo" })).secret;
  openai = new OpenAI({ apiKey, baseURL: `${gateway.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey, baseURL: `${gateway.url}/api`, maxRetries: 0 });
});
after(() => gateway.close());

const ECHO =
  /^Demo answer from demo-echo \(made by the gateway itself; no model was called\): you said "Hello, demo!"\.$/;

test("chat completions, streamed and not, answer with the same echo", async () => {
  const completion = await openai.chat.completions.create({
    model: "demo/echo",
    messages: [{ role: "user", content: "Hello, demo!" }],
  });
  assert.match(completion.choices[0].message.content ?? "", ECHO);
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.ok((completion.usage?.prompt_tokens ?? 0) > 0 && (completion.usage?.completion_tokens ?? 0) > 0);

  const stream = await openai.chat.completions.create({
    model: "demo/echo",
    stream: true,
    messages: [{ role: "user", content: "Hello, demo!" }],
  });
  let text = "";
  let deltas = 0;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta?.content;
    if (delta) {
      text += delta;
      deltas++;
    }
  }
  assert.match(text, ECHO);
  assert.ok(deltas > 5, "streamed word by word");
});

test("responses and messages answer too; a forced tool call comes back as one", async () => {
  const response = await openai.responses.create({ model: "demo/echo", input: "Hello, demo!" });
  assert.match(response.output_text, ECHO);

  const events: string[] = [];
  const streamed = await openai.responses.create({ model: "demo/echo", input: "Hello, demo!", stream: true });
  for await (const event of streamed) events.push(event.type);
  assert.equal(events.at(-1), "response.completed");

  const message = await anthropic.messages.create({
    model: "sonnet",
    max_tokens: 256,
    messages: [{ role: "user", content: "Hello, demo!" }],
  });
  assert.equal(message.model, "demo/echo", "the client's default name resolves through the demo aliases");
  assert.equal(message.content[0].type, "text");
  assert.match((message.content[0] as { text: string }).text, ECHO);

  const tool = await openai.chat.completions.create({
    model: "demo/echo",
    messages: [{ role: "user", content: "What time is it?" }],
    tools: [{ type: "function", function: { name: "get_time", parameters: { type: "object" } } }],
    tool_choice: "required",
  });
  assert.equal(tool.choices[0].finish_reason, "tool_calls");
  const call = tool.choices[0].message.tool_calls?.[0];
  assert.equal(call?.type === "function" ? call.function.name : undefined, "get_time");
});

test("a demo answer is metered and billed at the demo model's price", async () => {
  const { data, response } = await openai.chat.completions
    .create({ model: "demo/echo-large", messages: [{ role: "user", content: "Hello, demo!" }] })
    .withResponse();
  const id = response.headers.get("x-request-id");
  assert.ok(id);
  let record: { status: string; cost_micro_usd: string; tokens_prompt: number } | undefined;
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    const lookup = await fetch(`${gateway.url}/api/v1/generation?id=${id}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    record = ((await lookup.json()) as { data: typeof record }).data;
    if (record?.status !== "in_progress") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(record?.status, "ok", JSON.stringify(record));
  // $10 / $20 per 1M tokens: micro-USD = 10 × prompt + 20 × completion tokens.
  const expected = 10 * (data.usage?.prompt_tokens ?? 0) + 20 * (data.usage?.completion_tokens ?? 0);
  assert.equal(record?.cost_micro_usd, String(expected));
});

test("the shipped catalog has no demo provider", () => {
  const shipped = loadConfigFile(DEFAULT_CONFIG_PATH, {});
  assert.deepEqual(
    shipped.providers.filter((provider) => provider.kind === "demo").map((provider) => provider.id),
    [],
  );
});
