import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { buildGenerateContentRequest, buildGenerateContentUrl } from "./build-request.js";

const googleProvider: Partial<ProviderConfig> = {
  kind: "google",
  baseUrl: "https://generativelanguage.googleapis.com/v1beta",
  apiKey: "AIzaSyTestKey0123456789abcdefghijklmno",
};

function googleCall(
  request: Partial<CanonicalRequest> = {},
  options: { provider?: Partial<ProviderConfig>; upstreamModel?: string; reasoning?: boolean } = {},
): UpstreamCall {
  const call = createTestCall({ request, provider: { ...googleProvider, ...options.provider } });
  call.upstreamModel = options.upstreamModel ?? "gemini-2.5-flash";
  if (options.reasoning) call.model.features = [...call.model.features, "reasoning"];
  return call;
}

test("URL: generateContent, streamGenerateContent?alt=sse, resource names; never the key", () => {
  const base = "https://generativelanguage.googleapis.com/v1beta";
  assert.equal(
    buildGenerateContentUrl(base, "gemini-2.5-flash", { stream: false }),
    `${base}/models/gemini-2.5-flash:generateContent`,
  );
  assert.equal(
    buildGenerateContentUrl(`${base}/`, "gemini-2.5-flash", { stream: true }),
    `${base}/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
  );
  assert.equal(
    buildGenerateContentUrl(base, "tunedModels/my-model-1", { stream: false }),
    `${base}/tunedModels/my-model-1:generateContent`,
  );
  assert.equal(
    buildGenerateContentUrl(base, "a b?", { stream: false }),
    `${base}/models/a%20b%3F:generateContent`,
  );
  const request = buildGenerateContentRequest(googleCall(), { stream: true });
  assert.doesNotMatch(request.url, /key=|AIza/);
});

test("headers: x-goog-api-key, content type, provider headers, request id", () => {
  const call = googleCall(
    {},
    { provider: { headers: { "X-Goog-User-Project": "p1", "X-Gateway-Request-Id": "no" } } },
  );
  const request = buildGenerateContentRequest(call, { stream: false });
  assert.deepEqual(request.headers, {
    "content-type": "application/json",
    accept: "application/json",
    "x-goog-api-key": "AIzaSyTestKey0123456789abcdefghijklmno",
    "x-goog-user-project": "p1",
    "x-gateway-request-id": "req_test_0001",
  });
  assert.equal(buildGenerateContentRequest(call, { stream: true }).headers.accept, "text/event-stream");
  const keyless = buildGenerateContentRequest(googleCall({}, { provider: { apiKey: undefined } }), {
    stream: false,
  });
  assert.equal(keyless.headers["x-goog-api-key"], undefined);
  assert.equal(keyless.headers.authorization, undefined);
});

test("minimal body: contents and generationConfig.maxOutputTokens", () => {
  const { body } = buildGenerateContentRequest(googleCall(), { stream: false });
  assert.deepEqual(body, {
    contents: [{ role: "user", parts: [{ text: "Hello" }] }],
    generationConfig: { maxOutputTokens: 1024 },
  });
});

test("system instruction, sampling, stop sequences, seed and penalties", () => {
  const { body } = buildGenerateContentRequest(
    googleCall({
      system: [
        { type: "text", text: "You are terse." },
        { type: "text", text: "" },
        { type: "text", text: "Answer in French." },
      ],
      sampling: {
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        minP: 0.1,
        logitBias: { "1": 2 },
        logprobs: true,
      },
      stop: ["END", "STOP"],
      user: "end-user-42",
      verbosity: "low",
    }),
    { stream: false },
  );
  assert.deepEqual(body.systemInstruction, {
    parts: [{ text: "You are terse." }, { text: "Answer in French." }],
  });
  assert.deepEqual(body.generationConfig, {
    maxOutputTokens: 1024,
    temperature: 0.2,
    topP: 0.9,
    topK: 40,
    stopSequences: ["END", "STOP"],
    seed: 7,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
  });
  assert.ok(!JSON.stringify(body).includes("end-user-42"), "user is not sent");
});

test("tools: functionDeclarations with cleaned parameters; no-argument tools carry no parameters", () => {
  const { body } = buildGenerateContentRequest(
    googleCall({
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          parameters: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            additionalProperties: false,
            properties: { city: { type: "string", format: "uri" }, days: { type: "integer", default: 1 } },
            required: ["city"],
          },
          strict: true,
        },
        { name: "now", parameters: { type: "object", properties: {}, additionalProperties: false } },
        { name: "ping" },
      ],
    }),
    { stream: false },
  );
  assert.deepEqual(body.tools, [
    {
      functionDeclarations: [
        {
          name: "get_weather",
          description: "Weather for a city",
          parameters: {
            type: "object",
            properties: { city: { type: "string" }, days: { type: "integer" } },
            required: ["city"],
          },
        },
        { name: "now" },
        { name: "ping" },
      ],
    },
  ]);
  assert.equal(body.toolConfig, undefined);
});

test("tool choice → functionCallingConfig", () => {
  const tools = [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }];
  const configOf = (toolChoice: CanonicalRequest["toolChoice"]) =>
    buildGenerateContentRequest(googleCall({ tools, toolChoice }), { stream: false }).body.toolConfig;
  assert.deepEqual(configOf({ type: "auto" }), { functionCallingConfig: { mode: "AUTO" } });
  assert.deepEqual(configOf({ type: "none" }), { functionCallingConfig: { mode: "NONE" } });
  assert.deepEqual(configOf({ type: "required" }), { functionCallingConfig: { mode: "ANY" } });
  assert.deepEqual(configOf({ type: "tool", name: "lookup" }), {
    functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["lookup"] },
  });
  assert.equal(configOf(undefined), undefined);
  // Without tools there is nothing to configure.
  const noTools = buildGenerateContentRequest(googleCall({ toolChoice: { type: "required" } }), {
    stream: false,
  });
  assert.equal(noTools.body.toolConfig, undefined);
});

test("structured output: json_schema → responseSchema (cleaned), json_object → JSON mode, text → nothing", () => {
  const schemaCall = googleCall({
    responseFormat: {
      type: "json_schema",
      name: "person",
      strict: true,
      schema: {
        type: "object",
        additionalProperties: false,
        properties: { name: { type: "string" }, age: { type: ["integer", "null"] } },
        required: ["name", "age"],
      },
    },
  });
  assert.deepEqual(buildGenerateContentRequest(schemaCall, { stream: false }).body.generationConfig, {
    maxOutputTokens: 1024,
    responseMimeType: "application/json",
    responseSchema: {
      type: "object",
      properties: { name: { type: "string" }, age: { type: "integer", nullable: true } },
      required: ["name", "age"],
    },
  });
  const objectCall = googleCall({ responseFormat: { type: "json_object" } });
  assert.deepEqual(buildGenerateContentRequest(objectCall, { stream: false }).body.generationConfig, {
    maxOutputTokens: 1024,
    responseMimeType: "application/json",
  });
  const textCall = googleCall({ responseFormat: { type: "text" } });
  assert.deepEqual(buildGenerateContentRequest(textCall, { stream: false }).body.generationConfig, {
    maxOutputTokens: 1024,
  });
});

test("thinking config only for reasoning models", () => {
  const plain = buildGenerateContentRequest(googleCall({ reasoning: { effort: "high" } }), { stream: false });
  assert.equal(plain.body.generationConfig?.thinkingConfig, undefined);
  const thinking = buildGenerateContentRequest(
    googleCall({ reasoning: { effort: "high" } }, { reasoning: true }),
    {
      stream: false,
    },
  );
  assert.deepEqual(thinking.body.generationConfig?.thinkingConfig, {
    includeThoughts: true,
    thinkingBudget: 24_576,
  });
});

test("pass-through: only known Gemini top-level fields, snake_case accepted", () => {
  const safetySettings = [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_LOW_AND_ABOVE" }];
  const { body } = buildGenerateContentRequest(
    googleCall({
      passthrough: {
        safety_settings: safetySettings,
        cachedContent: "cachedContents/abc123",
        labels: { team: "a" },
        logit_bias: { "50256": -100 },
        provider: { order: ["google"] },
        contents: [{ role: "user", parts: [{ text: "injected" }] }],
        generationConfig: { candidateCount: 4 },
      },
    }),
    { stream: false },
  );
  assert.deepEqual(body.safetySettings, safetySettings);
  assert.equal(body.cachedContent, "cachedContents/abc123");
  assert.deepEqual(Object.keys(body).sort(), [
    "cachedContent",
    "contents",
    "generationConfig",
    "safetySettings",
  ]);
  assert.deepEqual(body.contents, [{ role: "user", parts: [{ text: "Hello" }] }]);
  assert.deepEqual(body.generationConfig, { maxOutputTokens: 1024 });
});
