import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { buildTestJpegHeader, buildTestPng } from "../../../test/helpers/build-test-image.js";
import {
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import {
  imageToolConfigSchema,
  isImageGenerationConfigured,
  resolveImageToolSettings,
} from "../../config/server-tools/image-config.js";
import { createImageGenerator, type ImageGenerator } from "./create-image-generator.js";
import type { ImageGenerationOutcome } from "./image-generation.js";

const servers: FakeOpenAiUpstream[] = [];
const generators: ImageGenerator[] = [];
after(async () => {
  await Promise.all(generators.map((generator) => generator.close()));
  await Promise.all(servers.map((server) => server.close()));
});

async function startProvider(): Promise<FakeOpenAiUpstream> {
  const server = await startFakeOpenAiUpstream();
  servers.push(server);
  return server;
}

const ENV = { OPENAI_KEY: "sk-test-openai", GEMINI_KEY: "gemini-test-key", BACKUP_KEY: "sk-backup" };

function createGenerator(providers: Array<Record<string, unknown>>, env: NodeJS.ProcessEnv = ENV) {
  const settings = resolveImageToolSettings(imageToolConfigSchema.parse({ providers }), env);
  const generator = createImageGenerator(settings);
  generators.push(generator);
  return generator;
}

function openAiProvider(server: FakeOpenAiUpstream, extra: Record<string, unknown> = {}) {
  return {
    id: "openai",
    kind: "openai",
    base_url: server.baseUrl,
    api_key_env: "OPENAI_KEY",
    model: "gpt-image-1",
    price_per_image_usd: "0.042",
    ...extra,
  };
}

function geminiProvider(server: FakeOpenAiUpstream, extra: Record<string, unknown> = {}) {
  return {
    id: "gemini",
    kind: "gemini",
    base_url: `${server.origin}/v1beta`,
    api_key_env: "GEMINI_KEY",
    model: "gemini-2.5-flash-image",
    price_per_image_usd: 0.039,
    ...extra,
  };
}

function expectImage(outcome: ImageGenerationOutcome) {
  assert.ok(outcome.ok, `expected an image, got ${JSON.stringify(!outcome.ok && outcome.failure)}`);
  return outcome.image;
}

function expectFailure(outcome: ImageGenerationOutcome, reason: string) {
  assert.ok(!outcome.ok, "expected a failure");
  assert.equal(outcome.failure.reason, reason, outcome.failure.message);
  return outcome.failure;
}

const PNG = buildTestPng(48, 32);

describe("image generation", () => {
  test("OpenAI Images API: the request's path, key, body, and the image, its size and price", async () => {
    const server = await startProvider();
    const generator = createGenerator([
      openAiProvider(server, { quality: "low", price_per_image_usd_by_size: { "1536x1024": "0.063" } }),
    ]);
    server.enqueue(
      fakeReply.json({
        created: 1_760_000_000,
        data: [{ b64_json: PNG.toString("base64"), revised_prompt: "a red fox, watercolour" }],
        size: "1536x1024",
        output_format: "png",
        usage: { input_tokens: 10, output_tokens: 200, total_tokens: 210 },
      }),
    );
    const image = expectImage(await generator.generate({ prompt: "  a fox  ", size: "1536x1024" }));

    const [request] = server.requests;
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/v1/images/generations");
    assert.equal(request.headers.authorization, "Bearer sk-test-openai");
    assert.equal(request.headers["content-type"], "application/json");
    assert.deepEqual(request.body, {
      model: "gpt-image-1",
      prompt: "a fox",
      n: 1,
      size: "1536x1024",
      quality: "low",
    });

    assert.equal(image.base64, PNG.toString("base64"));
    assert.equal(image.mediaType, "image/png");
    assert.equal(image.width, 48);
    assert.equal(image.height, 32);
    assert.equal(image.requestedSize, "1536x1024");
    assert.equal(image.revisedPrompt, "a red fox, watercolour");
    assert.equal(image.providerId, "openai");
    assert.equal(image.model, "gpt-image-1");
    assert.equal(image.costMicroUsd, 63_000);
    assert.ok(image.durationMs >= 0);
  });

  test("Gemini generateContent: the request's path, key and IMAGE modality, the inline image and its text", async () => {
    const server = await startProvider();
    const generator = createGenerator([geminiProvider(server)]);
    const jpeg = buildTestJpegHeader(640, 960);
    server.enqueue(
      fakeReply.json({
        candidates: [
          {
            content: {
              role: "model",
              parts: [
                { text: "Here is a tall lighthouse." },
                { inlineData: { mimeType: "image/png", data: jpeg.toString("base64") } },
              ],
            },
            finishReason: "STOP",
          },
        ],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 1290, totalTokenCount: 1298 },
      }),
    );
    const image = expectImage(await generator.generate({ prompt: "a lighthouse", size: "1024x1536" }));

    const [request] = server.requests;
    assert.equal(request.path, "/v1beta/models/gemini-2.5-flash-image:generateContent");
    assert.equal(request.headers["x-goog-api-key"], "gemini-test-key");
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(request.body, {
      contents: [{ role: "user", parts: [{ text: "a lighthouse" }] }],
      generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "2:3" } },
    });
    // The media type comes from the bytes, not from what the provider claimed.
    assert.equal(image.mediaType, "image/jpeg");
    assert.equal(image.width, 640);
    assert.equal(image.height, 960);
    assert.equal(image.revisedPrompt, "Here is a tall lighthouse.");
    assert.equal(image.costMicroUsd, 39_000);
  });

  test("a content-policy refusal (400 moderation_blocked) is typed and not retried elsewhere", async () => {
    const [first, second] = [await startProvider(), await startProvider()];
    const generator = createGenerator([
      openAiProvider(first),
      openAiProvider(second, { id: "backup", api_key_env: "BACKUP_KEY" }),
    ]);
    first.enqueue(
      fakeReply.error(400, {
        error: {
          type: "image_generation_user_error",
          code: "moderation_blocked",
          message: "Your request was rejected by the safety system.",
          param: null,
        },
      }),
    );
    const failure = expectFailure(
      await generator.generate({ prompt: "something refused" }),
      "content_policy",
    );
    assert.equal(failure.status, 400);
    assert.equal(failure.errorCode, "content_filter");
    assert.equal(failure.providerCode, "moderation_blocked");
    assert.equal(failure.providerId, "openai");
    assert.match(failure.message, /refused the prompt under its content policy \(moderation_blocked\)/);
    assert.equal(second.requests.length, 0);
  });

  test("Gemini refusals with HTTP 200 are content-policy failures", async () => {
    const server = await startProvider();
    const generator = createGenerator([geminiProvider(server)]);
    server.enqueue(
      fakeReply.json({
        candidates: [{ content: { role: "model", parts: [] }, finishReason: "IMAGE_SAFETY" }],
      }),
      fakeReply.json({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" } }),
    );
    const byFinish = expectFailure(await generator.generate({ prompt: "x" }), "content_policy");
    assert.equal(byFinish.providerCode, "IMAGE_SAFETY");
    const byPrompt = expectFailure(await generator.generate({ prompt: "y" }), "content_policy");
    assert.equal(byPrompt.providerCode, "PROHIBITED_CONTENT");
  });

  test("a 500 is a classified http_error; with a second provider the image comes from it, at its price", async () => {
    const [first, second] = [await startProvider(), await startProvider()];
    const alone = createGenerator([openAiProvider(first)]);
    first.enqueue(fakeReply.error(500, { error: { message: "boom", type: "server_error" } }));
    const failure = expectFailure(await alone.generate({ prompt: "a cat" }), "http_error");
    assert.equal(failure.status, 500);
    assert.equal(failure.errorCode, "provider_unavailable");
    assert.equal(failure.message, "The image provider failed (HTTP 500)");

    const withBackup = createGenerator([
      openAiProvider(first),
      openAiProvider(second, { id: "backup", api_key_env: "BACKUP_KEY", price_per_image_usd: "0.05" }),
    ]);
    first.enqueue(fakeReply.error(503, { error: { message: "overloaded", type: "server_error" } }));
    second.enqueue(fakeReply.json({ created: 1, data: [{ b64_json: PNG.toString("base64") }] }));
    const image = expectImage(await withBackup.generate({ prompt: "a cat" }));
    assert.equal(image.providerId, "backup");
    assert.equal(image.costMicroUsd, 50_000);
    assert.equal(second.requests[0].headers.authorization, "Bearer sk-backup");
  });

  test("a provider that stalls fails as timeout at its deadline", async () => {
    const server = await startProvider();
    const generator = createGenerator([openAiProvider(server, { timeout_ms: 1000 })]);
    server.enqueue(fakeReply.hang());
    const started = performance.now();
    const failure = expectFailure(await generator.generate({ prompt: "slow" }), "timeout");
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 3000, `failed after ${elapsed.toFixed(0)} ms`);
    assert.match(failure.message, /did not answer within 1000 ms/);
    assert.equal(failure.providerId, "openai");
  });

  test("the caller's abort ends the call at once", async () => {
    const server = await startProvider();
    const generator = createGenerator([openAiProvider(server)]);
    server.enqueue(fakeReply.hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expectFailure(await generator.generate({ prompt: "x" }, { signal: controller.signal }), "aborted");
    assert.ok(performance.now() - started < 1000);
  });

  test("an unreachable provider is a network_error", async () => {
    const server = await startProvider();
    const provider = openAiProvider(server);
    await server.close();
    const generator = createGenerator([provider]);
    const failure = expectFailure(await generator.generate({ prompt: "x" }), "network_error");
    assert.equal(failure.errorCode, "provider_unavailable");
  });

  test("a 2xx answer without a usable image is a bad_response", async () => {
    const server = await startProvider();
    const generator = createGenerator([openAiProvider(server)]);
    server.enqueue(
      fakeReply.json({
        created: 1,
        data: [{ b64_json: Buffer.from("<html>nope</html>").toString("base64") }],
      }),
      fakeReply.json({ created: 1, data: [{ url: "https://example.invalid/x.png" }] }),
      fakeReply.raw("not json", { status: 200 }),
    );
    assert.match(
      expectFailure(await generator.generate({ prompt: "x" }), "bad_response").message,
      /not a PNG, JPEG/,
    );
    assert.match(
      expectFailure(await generator.generate({ prompt: "x" }), "bad_response").message,
      /sent a URL/,
    );
    assert.match(
      expectFailure(await generator.generate({ prompt: "x" }), "bad_response").message,
      /not JSON/,
    );
  });

  test("bad arguments fail before any request", async () => {
    const server = await startProvider();
    const generator = createGenerator([openAiProvider(server)]);
    expectFailure(await generator.generate({ prompt: "   " }), "invalid_request");
    expectFailure(await generator.generate({ prompt: "x".repeat(4001) }), "invalid_request");
    const size = expectFailure(await generator.generate({ prompt: "x", size: "999x999" }), "invalid_request");
    assert.match(size.message, /size must be one of 1024x1024, 1536x1024, 1024x1536/);
    assert.equal(server.requests.length, 0);
  });

  test("configured exactly when a provider's key is in the environment", async () => {
    const server = await startProvider();
    const file = imageToolConfigSchema.parse({ providers: [openAiProvider(server)] });
    assert.equal(isImageGenerationConfigured(resolveImageToolSettings(file, ENV)), true);
    assert.equal(isImageGenerationConfigured(resolveImageToolSettings(file, {})), false);
    assert.equal(isImageGenerationConfigured(resolveImageToolSettings(file, { OPENAI_KEY: "" })), false);
    assert.equal(isImageGenerationConfigured(undefined), false);

    const generator = createGenerator([openAiProvider(server)], {});
    assert.equal(generator.configured, false);
    const failure = expectFailure(await generator.generate({ prompt: "x" }), "not_configured");
    assert.match(failure.message, /no image provider has its API key set \(OPENAI_KEY\)/);
    assert.equal(server.requests.length, 0);

    // A provider whose key is missing is skipped; the next one serves.
    const second = await startProvider();
    const skipping = createGenerator(
      [openAiProvider(server), openAiProvider(second, { id: "backup", api_key_env: "BACKUP_KEY" })],
      { BACKUP_KEY: "sk-backup" },
    );
    assert.equal(skipping.configured, true);
    second.enqueue(fakeReply.json({ created: 1, data: [{ b64_json: PNG.toString("base64") }] }));
    assert.equal(expectImage(await skipping.generate({ prompt: "x" })).providerId, "backup");
    assert.equal(server.requests.length, 0);
  });

  test("the worst-case price covers every usable provider and size", async () => {
    const server = await startProvider();
    const generator = createGenerator([
      openAiProvider(server, { price_per_image_usd_by_size: { "1024x1536": "0.25" } }),
      geminiProvider(server),
    ]);
    assert.equal(generator.maxCostMicroUsd(), 250_000);
  });
});
