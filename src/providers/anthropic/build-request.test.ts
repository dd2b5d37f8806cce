import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall, createTestModel } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import type { ModelFeature, ProviderConfig } from "../../catalog/types.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { buildAnthropicRequest } from "./build-request.js";

function callWith(
  options: {
    request?: Partial<CanonicalRequest>;
    provider?: Partial<ProviderConfig>;
    features?: ModelFeature[];
    maxOutputTokens?: number;
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: { kind: "anthropic", baseUrl: "https://api.anthropic.test/v1", ...options.provider },
  });
  return {
    ...call,
    model: { ...createTestModel(), features: options.features ?? ["tools", "streaming"] },
    maxOutputTokens: options.maxOutputTokens ?? call.maxOutputTokens,
  };
}

test("URL, headers and the minimal body", () => {
  const request = buildAnthropicRequest(
    callWith({ provider: { headers: { "X-Title": "gateway", "Anthropic-Version": "2023-06-01" } } }),
    { stream: false },
  );
  assert.equal(request.url, "https://api.anthropic.test/v1/messages");
  assert.deepEqual(request.headers, {
    "content-type": "application/json",
    accept: "application/json",
    "anthropic-version": "2023-06-01",
    "x-api-key": "sk-test-key-0123456789",
    "x-title": "gateway",
    "x-request-id": "req_test_0001",
    "x-gateway-request-id": "req_test_0001",
  });
  assert.deepEqual(request.body, {
    model: "upstream-model-1",
    max_tokens: 1024,
    messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
  });
  assert.equal(request.jsonToolName, undefined);
});

test("no x-api-key without an API key; a configured auth header is kept", () => {
  const request = buildAnthropicRequest(
    callWith({ provider: { apiKey: undefined, headers: { Authorization: "Bearer relay" } } }),
    { stream: false },
  );
  assert.equal(request.headers["x-api-key"], undefined);
  assert.equal(request.headers.authorization, "Bearer relay");
});

test("stream: `stream: true` and an SSE accept header; generate sends no stream field", () => {
  const streamed = buildAnthropicRequest(callWith(), { stream: true });
  assert.equal(streamed.body.stream, true);
  assert.equal(streamed.headers.accept, "text/event-stream");
  assert.equal("stream" in buildAnthropicRequest(callWith(), { stream: false }).body, false);
});

test("anthropic-beta: caller betas joined with the provider's, deduplicated, junk dropped", () => {
  const request = buildAnthropicRequest(
    callWith({
      request: {
        anthropicBeta: [
          "interleaved-thinking-2025-05-14",
          " context-1m-2025-08-07,interleaved-thinking-2025-05-14 ",
        ],
      },
      provider: { headers: { "anthropic-beta": "files-api-2025-04-14" } },
    }),
    { stream: false },
  );
  assert.equal(
    request.headers["anthropic-beta"],
    "files-api-2025-04-14,interleaved-thinking-2025-05-14,context-1m-2025-08-07",
  );
  const injected = buildAnthropicRequest(callWith({ request: { anthropicBeta: ["x\r\nevil: 1", ""] } }), {
    stream: false,
  });
  assert.equal(injected.headers["anthropic-beta"], undefined);
  assert.equal(buildAnthropicRequest(callWith(), { stream: false }).headers["anthropic-beta"], undefined);
});

test("system: text blocks with cache_control kept, blank parts dropped, absent when all blank", () => {
  const request = buildAnthropicRequest(
    callWith({
      request: {
        system: [
          { type: "text", text: "You are terse.", cacheControl: { type: "ephemeral", ttl: "1h" } },
          { type: "text", text: "  \n" },
          { type: "text", text: "Answer in French." },
        ],
      },
    }),
    { stream: false },
  );
  assert.deepEqual(request.body.system, [
    { type: "text", text: "You are terse.", cache_control: { type: "ephemeral", ttl: "1h" } },
    { type: "text", text: "Answer in French." },
  ]);
  const blank = buildAnthropicRequest(callWith({ request: { system: [{ type: "text", text: " " }] } }), {
    stream: false,
  });
  assert.equal("system" in blank.body, false);
});

test("tools: input_schema (default object), description, cache_control; strict is not sent", () => {
  const request = buildAnthropicRequest(
    callWith({
      request: {
        tools: [
          {
            name: "get_weather",
            description: "Weather",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            strict: true,
            cacheControl: { type: "ephemeral" },
          },
          { name: "noop", description: "" },
        ],
      },
    }),
    { stream: false },
  );
  assert.deepEqual(request.body.tools, [
    {
      name: "get_weather",
      description: "Weather",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      cache_control: { type: "ephemeral" },
    },
    { name: "noop", input_schema: { type: "object" } },
  ]);
  assert.equal("tool_choice" in request.body, false);
});

test("tool_choice mapping and disable_parallel_tool_use", () => {
  const tools = [{ name: "f" }];
  const cases: Array<[Partial<CanonicalRequest>, unknown]> = [
    [{ toolChoice: { type: "auto" } }, { type: "auto" }],
    [{ toolChoice: { type: "required" } }, { type: "any" }],
    [{ toolChoice: { type: "tool", name: "f" } }, { type: "tool", name: "f" }],
    [{ toolChoice: { type: "none" } }, { type: "none" }],
    [{ parallelToolCalls: false }, { type: "auto", disable_parallel_tool_use: true }],
    [
      { toolChoice: { type: "required" }, parallelToolCalls: false },
      { type: "any", disable_parallel_tool_use: true },
    ],
    [
      { toolChoice: { type: "tool", name: "f" }, parallelToolCalls: false },
      { type: "tool", name: "f", disable_parallel_tool_use: true },
    ],
    [{ toolChoice: { type: "none" }, parallelToolCalls: false }, { type: "none" }],
    [{ parallelToolCalls: true }, undefined],
  ];
  for (const [fields, expected] of cases) {
    const body = buildAnthropicRequest(callWith({ request: { tools, ...fields } }), { stream: false }).body;
    assert.deepEqual(body.tool_choice, expected, JSON.stringify(fields));
  }
  // Anthropic refuses tool_choice without tools.
  const noTools = buildAnthropicRequest(callWith({ request: { toolChoice: { type: "required" } } }), {
    stream: false,
  });
  assert.equal("tool_choice" in noTools.body, false);
  assert.equal("tools" in noTools.body, false);
});

test("sampling: temperature clamped to 0..1, top_p only without temperature, top_k, stop sequences; OpenAI-only knobs dropped", () => {
  const body = buildAnthropicRequest(
    callWith({
      request: {
        sampling: {
          temperature: 1.7,
          topP: 0.9,
          topK: 40,
          frequencyPenalty: 0.5,
          presencePenalty: 0.1,
          seed: 7,
          logprobs: true,
          minP: 0.1,
        },
        stop: ["END", "\n\n"],
      },
    }),
    { stream: false },
  ).body;
  assert.equal(body.temperature, 1);
  // Current Claude models reject temperature and top_p together: temperature wins.
  assert.equal("top_p" in body, false);
  assert.equal(body.top_k, 40);
  assert.deepEqual(body.stop_sequences, ["END", "\n\n"]);
  for (const field of ["frequency_penalty", "presence_penalty", "seed", "logprobs", "min_p"]) {
    assert.equal(field in body, false, field);
  }
  const exact = buildAnthropicRequest(callWith({ request: { sampling: { temperature: 0.3 }, stop: [] } }), {
    stream: false,
  }).body;
  assert.equal(exact.temperature, 0.3);
  assert.equal("stop_sequences" in exact, false);
  const topPOnly = buildAnthropicRequest(callWith({ request: { sampling: { topP: 0.9 } } }), {
    stream: false,
  }).body;
  assert.equal(topPOnly.top_p, 0.9);
});

test("metadata.user_id from the caller's metadata, else from `user`; other metadata keys dropped", () => {
  const fromUser = buildAnthropicRequest(callWith({ request: { user: "end-user-1" } }), {
    stream: false,
  }).body;
  assert.deepEqual(fromUser.metadata, { user_id: "end-user-1" });
  const fromMetadata = buildAnthropicRequest(
    callWith({ request: { user: "ignored", metadata: { user_id: "u-42", session: "s" } } }),
    { stream: false },
  ).body;
  assert.deepEqual(fromMetadata.metadata, { user_id: "u-42" });
  assert.equal("metadata" in buildAnthropicRequest(callWith(), { stream: false }).body, false);
});

test("pass-through: only allow-listed Messages API fields, never OpenAI-only ones or protected fields", () => {
  const body = buildAnthropicRequest(
    callWith({
      request: {
        passthrough: {
          service_tier: "auto",
          container: "container_abc",
          mcp_servers: [{ type: "url", url: "https://mcp.example.com", name: "m" }],
          context_management: { edits: [] },
          cache_control: { type: "ephemeral", ttl: "5m" },
          inference_geo: "us",
          output_config: { effort: "medium" },
          model: "other-model",
          max_tokens: 5,
          messages: [],
          stream: true,
          logit_bias: { 1: 2 },
          provider: { order: ["x"] },
          transforms: ["middle-out"],
          prediction: { type: "content", content: "x" },
        },
      },
    }),
    { stream: false },
  ).body;
  assert.deepEqual(body, {
    model: "upstream-model-1",
    max_tokens: 1024,
    messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    service_tier: "auto",
    container: "container_abc",
    mcp_servers: [{ type: "url", url: "https://mcp.example.com", name: "m" }],
    context_management: { edits: [] },
    cache_control: { type: "ephemeral", ttl: "5m" },
    inference_geo: "us",
    output_config: { effort: "medium" },
  });
  const flex = buildAnthropicRequest(callWith({ request: { passthrough: { service_tier: "flex" } } }), {
    stream: false,
  }).body;
  assert.equal("service_tier" in flex, false);
});
