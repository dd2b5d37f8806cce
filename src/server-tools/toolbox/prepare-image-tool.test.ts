import assert from "node:assert/strict";
import { after, test } from "node:test";
import { buildTestPng } from "../../../test/helpers/build-test-image.js";
import {
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import type { CanonicalRequest, ServerToolActivation } from "../../canonical/index.js";
import type { ServerToolSession } from "../../engine/ports.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { datetimeConfigSchema } from "../datetime/index.js";
import { type ImageToolConfigFile, imageToolConfigSchema } from "../image/index.js";
import { webFetchConfigSchema } from "../web-fetch/index.js";
import { createServerTools, type GatewayServerTools } from "./create-server-tools.js";

const PNG = buildTestPng(64, 48);
const opened: GatewayServerTools[] = [];
const servers: FakeOpenAiUpstream[] = [];
after(async () => {
  await Promise.all(opened.map((tools) => tools.close()));
  await Promise.all(servers.map((server) => server.close()));
});

async function startImagesApi(): Promise<FakeOpenAiUpstream> {
  const server = await startFakeOpenAiUpstream();
  servers.push(server);
  return server;
}

function imageConfig(server: FakeOpenAiUpstream, extra: Record<string, unknown> = {}): ImageToolConfigFile {
  return imageToolConfigSchema.parse({
    providers: [
      {
        id: "openai",
        kind: "openai",
        base_url: server.baseUrl,
        api_key_env: "IMAGES_KEY",
        model: "gpt-image-1",
        price_per_image_usd: "0.042",
        price_per_image_usd_by_size: { "1536x1024": "0.063" },
        timeout_ms: 5000,
        ...extra,
      },
    ],
  });
}

function openTools(
  image: ImageToolConfigFile | undefined,
  env: Record<string, string> = { IMAGES_KEY: "sk-img" },
) {
  const tools = createServerTools(
    {
      webFetch: webFetchConfigSchema.parse({}),
      datetime: datetimeConfigSchema.parse({}),
      ...(image === undefined ? {} : { image }),
    },
    { env },
  );
  opened.push(tools);
  return tools;
}

function activation(parameters?: Record<string, unknown>): ServerToolActivation {
  return {
    id: "image",
    maxUses: 1000,
    events: false,
    param: "plugins[0]",
    ...(parameters ? { parameters } : {}),
  };
}

function prepare(tools: GatewayServerTools, parameters?: Record<string, unknown>): ServerToolSession {
  const request = {
    model: "m",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "draw" }] }],
    tools: [],
    sampling: {},
    serverTools: [activation(parameters)],
    toolEvents: false,
    stream: false,
    passthrough: {},
  } as unknown as CanonicalRequest;
  return tools.prepare(request);
}

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, "invalid_request");
    return error;
  }
  assert.fail("expected the activation to be refused");
}

const signal = new AbortController().signal;

test("image activation: refused naming the activation when the tool is not configured or has no key", async () => {
  const notConfigured = refusal(() => prepare(openTools(undefined)));
  assert.equal(notConfigured.param, "plugins[0]");
  assert.match(notConfigured.message, /not configured on this gateway \(server_tools\.image\.providers\)/);

  const server = await startImagesApi();
  const keyless = openTools(imageConfig(server), {});
  const noKey = refusal(() => prepare(keyless));
  assert.equal(noKey.param, "plugins[0]");
  assert.match(noKey.message, /no image provider has its API key set \(IMAGES_KEY\)/);
  assert.deepEqual(keyless.missingConfiguration, [
    "image provider openai: environment variable IMAGES_KEY is not set",
  ]);
  assert.equal(server.requests.length, 0, "nothing is sent for a refused activation");
});

test("image activation: a size option must be one of the tool's sizes", async () => {
  const tools = openTools(imageConfig(await startImagesApi()));
  for (const size of ["512x512", 1024, ["1024x1024"]]) {
    const error = refusal(() => prepare(tools, { size }));
    assert.equal(error.param, "plugins[0].size");
    assert.match(error.message, /1024x1024, 1536x1024, 1024x1536 or auto/);
  }
  assert.ok(prepare(tools, { size: "auto" }), "auto lets the model choose");
});

test("image call: the provider is asked, the client gets the image, the model a sentence, the price is charged", async () => {
  const server = await startImagesApi();
  server.enqueue(
    fakeReply.json({
      created: 1,
      data: [{ b64_json: PNG.toString("base64"), revised_prompt: "A red fox." }],
    }),
  );
  const session = prepare(openTools(imageConfig(server)));
  assert.deepEqual(
    session.definitions.map((definition) => definition.name),
    ["generate_image"],
  );
  assert.ok("size" in (session.definitions[0].parameters as { properties: object }).properties);
  assert.equal(session.toolNamed("generate_image"), "image");
  assert.equal(session.maxCallCostMicroUsd("image"), 63_000, "the dearest size");
  assert.ok(session.maxResultTokens("image") <= 1_000);

  const execution = await session.execute("image", '{"prompt":"a fox","size":"1536x1024"}', signal);
  assert.equal(server.requests[0].path, "/v1/images/generations");
  assert.equal(server.requests[0].headers.authorization, "Bearer sk-img");
  assert.deepEqual(server.requests[0].body, {
    model: "gpt-image-1",
    prompt: "a fox",
    n: 1,
    size: "1536x1024",
  });
  assert.deepEqual(execution.output, {
    kind: "image",
    base64: PNG.toString("base64"),
    mediaType: "image/png",
    size: "64x48",
    revisedPrompt: "A red fox.",
    provider: "openai",
    model: "gpt-image-1",
  });
  assert.equal(execution.error, undefined);
  assert.equal(execution.costMicroUsd, 63_000, "the price of the size asked for");
  assert.equal(
    execution.forModel,
    "Generated a 64x48 PNG image; it is shown to the user. The provider used this prompt: A red fox.",
  );
});

test("image call: a size fixed by the activation replaces the model's, and the model is not offered one", async () => {
  const server = await startImagesApi();
  server.enqueue(fakeReply.json({ data: [{ b64_json: PNG.toString("base64") }] }));
  const session = prepare(openTools(imageConfig(server)), { size: "1024x1024" });
  const parameters = session.definitions[0].parameters as { properties: object; required: string[] };
  assert.deepEqual(Object.keys(parameters.properties), ["prompt"]);
  assert.deepEqual(parameters.required, ["prompt"]);
  assert.equal(session.maxCallCostMicroUsd("image"), 42_000, "the fixed size's price");
  const execution = await session.execute("image", '{"prompt":"a fox","size":"1536x1024"}', signal);
  assert.equal(server.requests[0].body.size, "1024x1024");
  assert.equal(execution.costMicroUsd, 42_000);
});

test("image call: failures are results the model reads, cost nothing and never throw", async () => {
  const server = await startImagesApi();
  const session = prepare(openTools(imageConfig(server)));
  const cases: Array<{
    reply?: Parameters<FakeOpenAiUpstream["enqueue"]>[0];
    args: string;
    code: string;
    forModel: RegExp;
  }> = [
    { args: '{"size":"1024x1024"}', code: "invalid_input", forModel: /prompt is required/ },
    {
      reply: fakeReply.error(400, { error: { code: "moderation_blocked", message: "blocked" } }),
      args: '{"prompt":"x"}',
      code: "invalid_input",
      forModel: /^Image generation failed: The image provider refused the prompt under its content policy/,
    },
    {
      reply: fakeReply.error(429, { error: { message: "slow down" } }),
      args: '{"prompt":"x"}',
      code: "too_many_requests",
      forModel: /^Image generation failed: /,
    },
    {
      reply: fakeReply.error(500, { error: { message: "boom" } }),
      args: '{"prompt":"x"}',
      code: "unavailable",
      forModel: /^Image generation failed: /,
    },
    {
      reply: fakeReply.json({ data: [{ b64_json: Buffer.from("not an image").toString("base64") }] }),
      args: '{"prompt":"x"}',
      code: "unavailable",
      forModel: /not a PNG, JPEG, WebP or GIF image/,
    },
  ];
  for (const { reply, args, code, forModel } of cases) {
    if (reply) server.enqueue(reply);
    const execution = await session.execute("image", args, signal);
    assert.equal(execution.output, undefined, args);
    assert.equal(execution.error?.code, code, execution.forModel);
    assert.match(execution.forModel, forModel);
    assert.equal(execution.error?.message, execution.forModel);
    assert.equal(execution.costMicroUsd, 0);
  }
  assert.equal(server.requests.length, 4, "a call without a prompt reaches no provider");

  const aborted = new AbortController();
  server.enqueue({ kind: "hang" });
  const pending = session.execute("image", '{"prompt":"x"}', aborted.signal);
  await server.waitForRequests(5);
  aborted.abort();
  const execution = await pending;
  assert.equal(execution.error?.code, "unavailable");
  assert.equal(execution.costMicroUsd, 0);
});
