import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import { buildChatCompletionsRequest } from "./build-request.js";

test("URL, headers and the minimal body", () => {
  const call = createTestCall({
    provider: { headers: { "X-Title": "gateway", Authorization: "Bearer override" } },
  });
  const request = buildChatCompletionsRequest(call, { stream: false });
  assert.equal(request.url, "http://127.0.0.1:9/v1/chat/completions");
  assert.deepEqual(request.headers, {
    "content-type": "application/json",
    accept: "application/json",
    authorization: "Bearer override",
    "x-title": "gateway",
    "x-request-id": "req_test_0001",
    "x-gateway-request-id": "req_test_0001",
  });
  assert.deepEqual(request.body, {
    model: "upstream-model-1",
    messages: [{ role: "user", content: "Hello" }],
    max_completion_tokens: 1024,
  });
});

test("no Authorization header without an API key", () => {
  const request = buildChatCompletionsRequest(createTestCall({ provider: { apiKey: undefined } }), {
    stream: false,
  });
  assert.equal(request.headers.authorization, undefined);
});

test("streaming always asks for usage and keeps caller stream options", () => {
  const call = createTestCall({
    request: { passthrough: { stream_options: { include_obfuscation: false, include_usage: false } } },
  });
  const request = buildChatCompletionsRequest(call, { stream: true });
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.stream_options, { include_obfuscation: false, include_usage: true });
  assert.equal(request.headers.accept, "text/event-stream");
  const plain = buildChatCompletionsRequest(call, { stream: false });
  assert.equal(plain.body.stream, undefined);
  assert.equal(plain.body.stream_options, undefined);
});

test("system parts, user media and files", () => {
  const call = createTestCall({
    request: {
      system: [
        { type: "text", text: "You are terse." },
        { type: "text", text: "Answer in French." },
      ],
      messages: [
        {
          role: "user",
          name: "alice",
          content: [
            { type: "text", text: "Describe these" },
            { type: "image", source: { kind: "url", url: "https://example.com/cat.png" }, detail: "low" },
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
            {
              type: "file",
              source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
              filename: "a.pdf",
            },
            { type: "file", source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" } },
          ],
        },
      ],
    },
  });
  const { messages } = buildChatCompletionsRequest(call, { stream: false }).body;
  assert.deepEqual(messages, [
    {
      role: "system",
      content: [
        { type: "text", text: "You are terse." },
        { type: "text", text: "Answer in French." },
      ],
    },
    {
      role: "user",
      name: "alice",
      content: [
        { type: "text", text: "Describe these" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
        { type: "file", file: { filename: "file.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
      ],
    },
  ]);
});

test("assistant turns with reasoning and tool calls, then one tool message per result", () => {
  const call = createTestCall({
    request: {
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
        {
          role: "assistant",
          content: [
            {
              type: "reasoning",
              text: "Two cities, two calls.",
              providerState: {
                providerKind: "anthropic",
                upstreamModel: "claude-x",
                signature: "sig-secret",
              },
            },
            { type: "tool-call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
            { type: "tool-call", id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
          ],
        },
        {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "call_1", content: [{ type: "text", text: "18°C" }] },
            {
              type: "tool-result",
              toolCallId: "call_2",
              content: [
                { type: "text", text: "see chart" },
                { type: "image", source: { kind: "base64", mediaType: "image/png", data: "AAAA" } },
              ],
            },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Paris 18°C, " },
            { type: "text", text: "Rome sunny." },
          ],
        },
      ],
    },
  });
  const { messages } = buildChatCompletionsRequest(call, { stream: false }).body;
  assert.deepEqual(messages.slice(1), [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
      ],
      reasoning: "Two cities, two calls.",
    },
    { role: "tool", tool_call_id: "call_1", content: "18°C" },
    {
      role: "tool",
      tool_call_id: "call_2",
      content: [
        { type: "text", text: "see chart" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      ],
    },
    { role: "assistant", content: "Paris 18°C, Rome sunny." },
  ]);
  assert.doesNotMatch(JSON.stringify(messages), /sig-secret/);
});

test("tools, tool choice, sampling, response format and the rest", () => {
  const call = createTestCall({
    request: {
      tools: [
        {
          name: "get_weather",
          description: "Weather",
          parameters: { type: "object", properties: {} },
          strict: true,
        },
        { name: "noop" },
      ],
      toolChoice: { type: "tool", name: "get_weather" },
      parallelToolCalls: false,
      sampling: {
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        minP: 0.05,
        topA: 0.1,
        frequencyPenalty: 0.5,
        presencePenalty: -0.5,
        repetitionPenalty: 1.1,
        seed: 42,
        logitBias: { "50256": -100 },
        logprobs: true,
        topLogprobs: 3,
      },
      stop: ["END"],
      responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
      reasoning: { effort: "high" },
      verbosity: "low",
      user: "user-7",
    },
  });
  const { body } = buildChatCompletionsRequest(call, { stream: false });
  assert.deepEqual(body.tools, [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather",
        parameters: { type: "object", properties: {} },
        strict: true,
      },
    },
    { type: "function", function: { name: "noop" } },
  ]);
  assert.deepEqual(body.tool_choice, { type: "function", function: { name: "get_weather" } });
  assert.equal(body.parallel_tool_calls, false);
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_p, 0.9);
  assert.equal(body.top_k, 40);
  assert.equal(body.min_p, 0.05);
  assert.equal(body.top_a, 0.1);
  assert.equal(body.frequency_penalty, 0.5);
  assert.equal(body.presence_penalty, -0.5);
  assert.equal(body.repetition_penalty, 1.1);
  assert.equal(body.seed, 42);
  assert.deepEqual(body.logit_bias, { "50256": -100 });
  assert.equal(body.logprobs, true);
  assert.equal(body.top_logprobs, 3);
  assert.deepEqual(body.stop, ["END"]);
  assert.deepEqual(body.response_format, {
    type: "json_schema",
    json_schema: { name: "answer", schema: { type: "object" }, strict: true },
  });
  assert.equal(body.reasoning_effort, "high");
  assert.equal(body.verbosity, "low");
  assert.equal(body.user, "user-7");
  assert.equal(body.max_completion_tokens, 1024);
});

test("simple tool choices map to their strings", () => {
  for (const type of ["auto", "none", "required"] as const) {
    const { body } = buildChatCompletionsRequest(createTestCall({ request: { toolChoice: { type } } }), {
      stream: false,
    });
    assert.equal(body.tool_choice, type);
  }
});

test("pass-through fields are merged verbatim but cannot replace model, messages or stream", () => {
  const call = createTestCall({
    request: {
      passthrough: {
        model: "evil",
        messages: [],
        stream: false,
        prompt_cache_key: "k1",
        metadata: { a: "b" },
        provider: { order: ["x"] },
      },
    },
  });
  const { body } = buildChatCompletionsRequest(call, { stream: true });
  assert.equal(body.model, "upstream-model-1");
  assert.equal(body.messages.length, 1);
  assert.equal(body.stream, true);
  assert.equal(body.prompt_cache_key, "k1");
  assert.deepEqual(body.metadata, { a: "b" });
  assert.deepEqual(body.provider, { order: ["x"] });
});
