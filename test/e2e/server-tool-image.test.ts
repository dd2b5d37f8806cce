/**
 * The image server tool end to end, through a real gateway: a model (the fake OpenAI-compatible
 * upstream) calls `generate_image` in round 1 and answers in round 2; the gateway runs the call
 * against a loopback fake of OpenAI's Images API (`POST /images/generations` → `{data: [{b64_json}]}`)
 * and the official clients read the image in each format, streamed and not:
 *
 * - Chat: `message.images` (create, and `chat.completions.stream()`'s `finalChatCompletion()`);
 * - Responses: an `image_generation_call` item (create, and `responses.stream()`'s `finalResponse()`);
 * - Messages: an `image` block (create, and `messages.stream()`'s `finalMessage()`).
 *
 * Also: what the model was offered and told (never the image), the image's price in `usage.cost`,
 * the record's `tool_costs_micro_usd` and the key's spend, a failing provider (the model is told,
 * nothing is charged), a key whose limit cannot pay for an image (no image is made), and the
 * activation's refusal and `meta.image_generation_configured` when no provider can be called.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import {
  checkChatStream,
  checkMessagesStream,
  checkResponsesStream,
  TOOL_EVENT,
} from "../conformance/support/stream-rules.js";
import { parseSseFrames } from "../conformance/support/wire-tap.js";
import { buildTestPng } from "../helpers/build-test-image.js";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  type FakeOpenAiUpstream,
  type FakeReply,
  fakeReply,
  type RecordedRequest,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import {
  forEachGatewayMode,
  startTestGateway,
  TEST_MODEL,
  type TestGateway,
} from "../helpers/test-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const PNG = buildTestPng(32, 24);
const PNG_BASE64 = PNG.toString("base64");
const ANSWER = "Here is the fox you asked for.";
/** Each round: 1000 prompt tokens at $2/M and 100 completion tokens at $8/M = 2800 µUSD. */
const ROUND_USAGE = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
const ROUND_MICRO_USD = 2_800;
const IMAGE_MICRO_USD = 40_000;
/** A prompt the fake Images API refuses with a 500. */
const BROKEN_PROMPT = "a broken fox";

function imageSection(imagesApi: FakeOpenAiUpstream, extra: Record<string, unknown> = {}) {
  return {
    image: {
      providers: [
        {
          id: "openai-images",
          kind: "openai",
          base_url: imagesApi.baseUrl,
          model: "gpt-image-1",
          price_per_image_usd: "0.04",
          price_per_image_usd_by_size: { "1536x1024": "0.06", "1024x1536": "0.06" },
          timeout_ms: 10_000,
          ...extra,
        },
      ],
    },
  };
}

/** The Images API: the image for any prompt but the broken one. */
function answerImages(request: RecordedRequest): FakeReply {
  if (request.body?.prompt === BROKEN_PROMPT) return fakeReply.error(500, { error: { message: "boom" } });
  return fakeReply.json({
    created: 1_764_000_000,
    data: [{ b64_json: PNG_BASE64, revised_prompt: "A red fox." }],
  });
}

/**
 * The model: with no tool result yet it calls `generate_image` with the user's last words as the
 * prompt; with one it answers. Streamed or not, as the gateway asks.
 */
function answerModel(request: RecordedRequest): FakeReply {
  const messages = request.body.messages as Json[];
  const streamed = request.body.stream === true;
  if (messages.at(-1)?.role === "tool") {
    return streamed
      ? fakeReply.sse(buildTextChunks([ANSWER], { usage: ROUND_USAGE }))
      : fakeReply.json(buildChatCompletion({ content: ANSWER, usage: ROUND_USAGE }));
  }
  const last = messages.at(-1)?.content;
  const prompt = typeof last === "string" ? last : (last as Json[]).map((part) => part.text).join("");
  const args = JSON.stringify({ prompt });
  if (!streamed) {
    return fakeReply.json(
      buildChatCompletion({
        toolCalls: [{ id: "call_up1", name: "generate_image", arguments: args }],
        usage: ROUND_USAGE,
      }),
    );
  }
  return fakeReply.sse([
    buildChunk({
      role: "assistant",
      content: null,
      tool_calls: [
        { index: 0, id: "call_up1", type: "function", function: { name: "generate_image", arguments: "" } },
      ],
    }),
    buildChunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
    buildChunk({}, { finishReason: "tool_calls" }),
    buildUsageChunk(ROUND_USAGE),
  ]);
}

function anthropicFor(context: TestGateway, apiKey = context.apiKey): Anthropic {
  return new Anthropic({ apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
}

async function readRecord(context: TestGateway, requestId: string): Promise<Json> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${requestId}`, {
      headers: { Authorization: `Bearer ${context.apiKey}` },
    });
    const record = ((await response.json()) as Json).data;
    if (record?.status !== "in_progress" || attempt >= 100) return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The model's two rounds of the last request: what it was offered, and what it was told. */
function lastRounds(context: TestGateway): { offered: string[]; told: Json } {
  const [first, second] = context.upstream.requests.slice(-2);
  return {
    offered: (first.body.tools as Json[]).map((tool) => tool.function.name),
    told: (second.body.messages as Json[]).at(-1),
  };
}

const imagesApi = await startFakeOpenAiUpstream();
imagesApi.setHandler(answerImages);
let gateway: TestGateway;

before(async () => {
  gateway = await startTestGateway("embedded", {
    configOverrides: { server_tools: imageSection(imagesApi) },
  });
  gateway.upstream.setHandler(answerModel);
});

after(async () => {
  await gateway?.close();
  await imagesApi.close();
});

const EXPECTED_COST = (2 * ROUND_MICRO_USD + IMAGE_MICRO_USD) / 1e6;

test("chat: the image reaches message.images, streamed and not; the model is told in words; the price is billed", async () => {
  const params = {
    model: TEST_MODEL,
    messages: [{ role: "user" as const, content: "a red fox" }],
    plugins: [{ id: "image" }],
  } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
  const { data: created, response } = await gateway.openai.chat.completions.create(params).withResponse();
  const streamed = await gateway.openai.chat.completions.stream(params as never).finalChatCompletion();
  for (const completion of [created, streamed]) {
    const message = completion.choices[0].message as Json;
    assert.equal(message.content, ANSWER);
    assert.deepEqual(message.images, [
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
    ]);
    assert.equal(completion.choices[0].finish_reason, "stop");
  }
  assert.equal((created.usage as Json).cost, EXPECTED_COST);

  const imageRequest = imagesApi.requests.at(-1)!;
  assert.equal(imageRequest.path, "/v1/images/generations");
  assert.deepEqual(imageRequest.body, { model: "gpt-image-1", prompt: "a red fox", n: 1, size: "1024x1024" });
  const { offered, told } = lastRounds(gateway);
  assert.deepEqual(offered, ["generate_image"]);
  assert.equal(told.role, "tool");
  assert.equal(told.tool_call_id, "call_up1");
  assert.match(
    told.content,
    /^Generated a 32x24 PNG image; it is shown to the user\. The provider used this prompt: A red fox\.$/,
  );

  const record = await readRecord(gateway, response.headers.get("x-request-id")!);
  assert.deepEqual(record.tool_costs_micro_usd, { image: String(IMAGE_MICRO_USD) });
  assert.equal(record.cost_micro_usd, String(2 * ROUND_MICRO_USD + IMAGE_MICRO_USD));
});

test("responses: an image_generation_call item with the image, from create() and from responses.stream()", async () => {
  const params = {
    model: TEST_MODEL,
    input: "a red fox",
    tools: [{ type: "image_generation" }],
  } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const created = await gateway.openai.responses.create(params);
  const streamed = await gateway.openai.responses
    .stream({ ...params, stream: true } as never)
    .finalResponse();
  for (const response of [created, streamed]) {
    assert.deepEqual(
      response.output.map((item) => item.type),
      ["image_generation_call", "message"],
    );
    const image = response.output[0] as Json;
    assert.equal(image.status, "completed");
    assert.equal(image.result, PNG_BASE64);
    assert.equal(image.size, "32x24");
    assert.equal(image.output_format, "png");
    assert.equal(image.revised_prompt, "A red fox.");
    assert.match(image.id, /^ig_/);
    assert.equal(response.output_text, ANSWER);
    assert.equal((response.usage as Json).cost, EXPECTED_COST);
  }
  // The answer sent back, image item and all, is accepted; the item is not sent to the model.
  const next = await gateway.openai.responses.create({
    model: TEST_MODEL,
    input: [
      { role: "user", content: "a red fox" },
      ...(created.output as OpenAI.Responses.ResponseInputItem[]),
      { role: "user", content: "a blue fox" },
    ],
    tools: [{ type: "image_generation" }],
  } as never);
  assert.equal(next.status, "completed");
  const replayed = gateway.upstream.requests.at(-2)!.body.messages as Json[];
  assert.deepEqual(
    replayed.map((message) => message.role),
    ["user", "assistant", "user"],
  );
  assert.ok(!JSON.stringify(replayed).includes(PNG_BASE64.slice(0, 40)), "no image goes back to the model");
});

test("messages: an image block before the answer, from create() and from messages.stream().finalMessage()", async () => {
  const anthropic = anthropicFor(gateway);
  const params = {
    model: TEST_MODEL,
    max_tokens: 512,
    messages: [{ role: "user" as const, content: "a red fox" }],
    plugins: [{ id: "image" }],
  } as Anthropic.MessageCreateParamsNonStreaming;
  const created = await anthropic.messages.create(params);
  const streamed = await anthropic.messages.stream(params).finalMessage();
  for (const message of [created, streamed]) {
    assert.deepEqual(JSON.parse(JSON.stringify(message.content)), [
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
      { type: "text", text: ANSWER },
    ]);
    assert.equal(message.stop_reason, "end_turn");
  }
  // Sent back as the assistant turn, the image block is accepted and dropped.
  await anthropic.messages.create({
    ...params,
    messages: [
      ...params.messages,
      { role: "assistant", content: JSON.parse(JSON.stringify(created.content)) },
      { role: "user", content: "a blue fox" },
    ],
  });
  const replayed = gateway.upstream.requests.at(-2)!.body.messages as Json[];
  assert.deepEqual(replayed[1], { role: "assistant", content: ANSWER });
});

test("raw streams keep each format's stream rules, with hi.tool_event frames summarising the image", async () => {
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.url}/api/v1/${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${gateway.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, stream: true, hi_tool_events: true, ...body }),
    });
    assert.equal(response.status, 200);
    return parseSseFrames(await response.text());
  };
  const formats = [
    {
      frames: await post("chat/completions", {
        messages: [{ role: "user", content: "a red fox" }],
        plugins: [{ id: "image" }],
      }),
      check: checkChatStream,
      event: (data: Json) => data.hi_tool_event,
      carriers: ["chunk"],
    },
    {
      frames: await post("responses", { input: "a red fox", tools: [{ type: "image_generation" }] }),
      check: checkResponsesStream,
      event: (data: Json) => data.hi_tool_event,
      carriers: ["response.output_item.done", "response.completed"],
    },
    {
      frames: await post("messages", {
        max_tokens: 512,
        messages: [{ role: "user", content: "a red fox" }],
        plugins: [{ id: "image" }],
      }),
      check: checkMessagesStream,
      event: (data: Json) => data,
      carriers: ["content_block_start"],
    },
  ];
  for (const { frames, check, event, carriers } of formats) {
    check(frames);
    const events = frames
      .filter((frame) => frame.event === TOOL_EVENT)
      .map((frame) => event(JSON.parse(frame.data)));
    assert.deepEqual(
      events.map((payload) => [payload.tool, payload.phase]),
      [
        ["image", "started"],
        ["image", "completed"],
      ],
    );
    assert.deepEqual(events[1].output, { media_type: "image/png", size: "32x24", bytes: PNG.length });
    assert.equal(events[1].cost_micro_usd, IMAGE_MICRO_USD);
    assert.equal(events[0].call_id, events[1].call_id);
    // The image goes out in its format's place only (the Responses terminal event repeats the output).
    assert.deepEqual(
      frames.filter((frame) => frame.data.includes(PNG_BASE64)).map((frame) => frame.event ?? "chunk"),
      carriers,
    );
  }
});

test("a failing image provider: the model is told, the answer goes on, nothing is charged for the image", async () => {
  const { data: completion, response } = await gateway.openai.chat.completions
    .create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: BROKEN_PROMPT }],
      plugins: [{ id: "image" }],
    } as never)
    .withResponse();
  const message = completion.choices[0].message as Json;
  assert.equal(message.content, ANSWER);
  assert.equal(message.images, undefined);
  const { told } = lastRounds(gateway);
  assert.match(told.content, /^Image generation failed: /);
  assert.equal((completion.usage as Json).cost, (2 * ROUND_MICRO_USD) / 1e6);
  const record = await readRecord(gateway, response.headers.get("x-request-id")!);
  assert.deepEqual(record.tool_costs_micro_usd, {});
  assert.equal(record.cost_micro_usd, String(2 * ROUND_MICRO_USD));
});

forEachGatewayMode(
  "image money: the key's spend includes the image; a limit that cannot pay for one makes none",
  async (context) => {
    context.upstream.setHandler(answerModel);
    const body = {
      model: TEST_MODEL,
      messages: [{ role: "user", content: "a red fox" }],
      plugins: [{ id: "image" }],
    };
    const spentBy = async (apiKey: string): Promise<string> => {
      const response = await fetch(`${context.url}/api/v1/key`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      return ((await response.json()) as Json).data.limits.total.spent_micro_usd;
    };
    const completion = await context.openai.chat.completions.create(body as never);
    assert.equal((completion.usage as Json).cost, EXPECTED_COST);
    assert.equal(await spentBy(context.apiKey), String(2 * ROUND_MICRO_USD + IMAGE_MICRO_USD));

    // $0.05 pays for the first round's worst case (about $0.033: 4096 output tokens at $8/M) but
    // not for that and an image ($0.06 at the dearest size): the call is answered "budget
    // exhausted" and no image is made.
    const { secret } = await context.admin.createKey({
      workspaceId: context.workspaceId,
      name: "small",
      totalLimitUsd: "0.05",
    });
    const imageRequests = imagesApi.requests.length;
    const limited = await context.createClient(secret).chat.completions.create(body as never);
    assert.equal(imagesApi.requests.length, imageRequests, "the Images API was not called");
    assert.equal(limited.choices[0].finish_reason, "length");
    assert.equal((limited.choices[0].message as Json).images, undefined);
    assert.equal((limited.usage as Json).cost, ROUND_MICRO_USD / 1e6, "one round, no image");
    assert.equal(await spentBy(secret), String(ROUND_MICRO_USD));
  },
  { configOverrides: { server_tools: imageSection(imagesApi) } },
);

test("not configured: the activation is refused naming the field, and meta.image_generation_configured says so", async () => {
  const cases: Array<{ overrides: Record<string, unknown>; message: RegExp; configured: boolean }> = [
    {
      overrides: {},
      message: /not configured on this gateway \(server_tools\.image\.providers\)/,
      configured: false,
    },
    {
      overrides: { server_tools: imageSection(imagesApi, { api_key_env: "HI_TEST_IMAGE_KEY_NEVER_SET" }) },
      message: /no image provider has its API key set \(HI_TEST_IMAGE_KEY_NEVER_SET\)/,
      configured: false,
    },
  ];
  for (const { overrides, message, configured } of cases) {
    const context = await startTestGateway("embedded", { configOverrides: overrides });
    try {
      const models = (await (await fetch(`${context.url}/api/v1/models`)).json()) as Json;
      assert.deepEqual(models.meta, { image_generation_configured: configured });
      const refused = await fetch(`${context.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          model: TEST_MODEL,
          messages: [{ role: "user", content: "fox" }],
          plugins: [{ id: "image" }],
        }),
      });
      assert.equal(refused.status, 400);
      const error = ((await refused.json()) as Json).error;
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, "plugins[0]");
      assert.match(error.message, message);
      assert.equal(context.upstream.requests.length, 0, "nothing reached the model");
      // OpenAI's hosted tool in a client's tool list is left out instead, and reported.
      const hosted = await fetch(`${context.url}/api/v1/responses`, {
        method: "POST",
        headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ model: TEST_MODEL, input: "fox", tools: [{ type: "image_generation" }] }),
      });
      assert.equal(hosted.status, 200, await hosted.clone().text());
      assert.equal(hosted.headers.get("x-hi-dropped"), "tools[0](image)");
    } finally {
      await context.close();
    }
  }
  const models = (await (await fetch(`${gateway.url}/api/v1/models`)).json()) as Json;
  assert.deepEqual(models.meta, { image_generation_configured: true });
});
