import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { buildResponsesRequest } from "./build-request.js";

function responsesCall(
  options: {
    request?: Partial<CanonicalRequest>;
    provider?: Partial<ProviderConfig>;
    reasoning?: boolean;
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: { kind: "openai-responses", ...options.provider },
  });
  if (options.reasoning) call.model.features = ["tools", "reasoning"];
  return call;
}

function bodyOf(call: UpstreamCall, stream = false) {
  return buildResponsesRequest(call, { stream }).body;
}

test("URL, headers and the minimal stateless body", () => {
  const request = buildResponsesRequest(responsesCall(), { stream: false });
  assert.equal(request.url, "http://127.0.0.1:9/v1/responses");
  assert.equal(request.headers.authorization, "Bearer sk-test-key-0123456789");
  assert.equal(request.headers.accept, "application/json");
  assert.equal(request.headers["x-request-id"], "req_test_0001");
  assert.deepEqual(request.body, {
    model: "upstream-model-1",
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] }],
    store: false,
    max_output_tokens: 1024,
  });
  const streamed = buildResponsesRequest(responsesCall(), { stream: true });
  assert.equal(streamed.body.stream, true);
  assert.equal(streamed.headers.accept, "text/event-stream");
});

test("system parts become one instructions string", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        system: [
          { type: "text", text: "You are terse." },
          { type: "text", text: "" },
          { type: "text", text: "Answer in French." },
        ],
      },
    }),
  );
  assert.equal(body.instructions, "You are terse.\n\nAnswer in French.");
  assert.equal(bodyOf(responsesCall()).instructions, undefined);
});

test("user text, images (URL and data URL, detail) and files (data and URL)", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        messages: [
          {
            role: "user",
            name: "alice",
            content: [
              { type: "text", text: "Describe" },
              { type: "text", text: "" },
              { type: "image", source: { kind: "url", url: "https://example.com/cat.png" }, detail: "low" },
              { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
              {
                type: "file",
                source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
                filename: "a.pdf",
              },
              { type: "file", source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" } },
              { type: "file", source: { kind: "url", url: "https://example.com/b.pdf" } },
            ],
          },
        ],
      },
    }),
  );
  assert.deepEqual(body.input, [
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "Describe" },
        { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" },
        { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
        { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
        { type: "input_file", filename: "file.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
        { type: "input_file", file_url: "https://example.com/b.pdf" },
      ],
    },
  ]);
});

const ownState = {
  providerKind: "openai-responses",
  upstreamModel: "upstream-model-1",
  encryptedContent: "gAAAAABown",
  itemId: "rs_own",
};

test("assistant history: own reasoning replayed right before the item that followed it", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        messages: [
          { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "Two cities.", providerState: ownState },
              { type: "tool-call", id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
              { type: "tool-call", id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
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
              {
                type: "reasoning",
                text: "",
                providerState: { ...ownState, itemId: "rs_2", encryptedContent: "gAAAA2" },
              },
              { type: "text", text: "Paris 18°C, " },
              { type: "text", text: "Rome sunny." },
            ],
          },
        ],
      },
    }),
  );
  assert.deepEqual(body.input.slice(1), [
    {
      type: "reasoning",
      id: "rs_own",
      summary: [{ type: "summary_text", text: "Two cities." }],
      encrypted_content: "gAAAAABown",
    },
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
    { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
    { type: "function_call_output", call_id: "call_1", output: "18°C" },
    {
      type: "function_call_output",
      call_id: "call_2",
      output: [
        { type: "input_text", text: "see chart" },
        { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
      ],
    },
    { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAA2" },
    {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Paris 18°C, Rome sunny." }],
    },
  ]);
});

test("foreign, other-model, stateless and trailing reasoning is dropped, never turned into text", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi" }] },
          {
            role: "assistant",
            content: [
              {
                type: "reasoning",
                text: "Claude thinking",
                providerState: { providerKind: "anthropic", upstreamModel: "claude-x", signature: "sig" },
              },
              {
                type: "reasoning",
                text: "other model",
                providerState: { ...ownState, upstreamModel: "gpt-other" },
              },
              { type: "reasoning", text: "no state" },
              {
                type: "reasoning",
                text: "id only",
                providerState: { ...ownState, encryptedContent: undefined },
              },
              { type: "text", text: "Hello" },
              { type: "reasoning", text: "trailing", providerState: ownState },
            ],
          },
          { role: "user", content: [{ type: "text", text: "More" }] },
        ],
      },
    }),
  );
  assert.deepEqual(body.input.slice(1, 2), [
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
  ]);
  assert.equal(body.input.length, 3);
  assert.doesNotMatch(JSON.stringify(body), /Claude thinking|sig|other model|no state|trailing/);
  // Native state a client brought along (unknown model) is the provider's to validate.
  const native = bodyOf(
    responsesCall({
      request: {
        messages: [
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "", providerState: { ...ownState, upstreamModel: "" } },
              { type: "text", text: "Hi" },
            ],
          },
        ],
      },
    }),
  );
  assert.equal(native.input[0].type, "reasoning");
});

test("flat tools (strict false unless asked), tool choice, parallel calls", () => {
  const body = bodyOf(
    responsesCall({
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
      },
    }),
  );
  assert.deepEqual(body.tools, [
    {
      type: "function",
      name: "get_weather",
      description: "Weather",
      parameters: { type: "object", properties: {} },
      strict: true,
    },
    { type: "function", name: "noop", parameters: { type: "object", properties: {} }, strict: false },
  ]);
  assert.deepEqual(body.tool_choice, { type: "function", name: "get_weather" });
  assert.equal(body.parallel_tool_calls, false);
  for (const type of ["auto", "none", "required"] as const) {
    assert.equal(bodyOf(responsesCall({ request: { toolChoice: { type } } })).tool_choice, type);
  }
});

test("structured output goes as text.format with the schema fields flat", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        responseFormat: {
          type: "json_schema",
          name: "answer",
          schema: { type: "object" },
          strict: true,
          description: "The answer",
        },
      },
    }),
  );
  assert.deepEqual(body.text, {
    format: {
      type: "json_schema",
      name: "answer",
      schema: { type: "object" },
      strict: true,
      description: "The answer",
    },
  });
  assert.deepEqual(bodyOf(responsesCall({ request: { responseFormat: { type: "json_object" } } })).text, {
    format: { type: "json_object" },
  });
});

const sampling = {
  temperature: 0.2,
  topP: 0.9,
  topK: 40,
  frequencyPenalty: 0.5,
  presencePenalty: 0.1,
  seed: 42,
  logitBias: { "1": 1 },
  logprobs: true,
  topLogprobs: 3,
};

test("non-reasoning model: temperature and top_p, no reasoning, include or verbosity", () => {
  const body = bodyOf(
    responsesCall({ request: { sampling, reasoning: { effort: "high" }, verbosity: "low" } }),
  );
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_p, 0.9);
  for (const field of [
    "reasoning",
    "include",
    "text",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "top_logprobs",
    "top_k",
  ]) {
    assert.equal(field in body, false, field);
  }
});

test("reasoning model: effort with summary auto, encrypted content included, sampling left out", () => {
  const body = bodyOf(
    responsesCall({
      reasoning: true,
      request: { sampling, reasoning: { effort: "high" }, verbosity: "low" },
    }),
  );
  assert.deepEqual(body.reasoning, { effort: "high", summary: "auto" });
  assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
  assert.deepEqual(body.text, { verbosity: "low" });
  assert.equal("temperature" in body, false);
  assert.equal("top_p" in body, false);
  assert.deepEqual(bodyOf(responsesCall({ reasoning: true })).reasoning, { summary: "auto" });
  const none = bodyOf(
    responsesCall({ reasoning: true, request: { sampling, reasoning: { effort: "none" } } }),
  );
  assert.equal(none.temperature, 0.2);
});

test("the caller's include is kept; encrypted content only for reasoning models", () => {
  const passthrough = { include: ["message.output_text.logprobs", "reasoning.encrypted_content", 7] };
  assert.deepEqual(bodyOf(responsesCall({ request: { passthrough } })).include, [
    "message.output_text.logprobs",
  ]);
  assert.deepEqual(bodyOf(responsesCall({ reasoning: true, request: { passthrough } })).include, [
    "message.output_text.logprobs",
    "reasoning.encrypted_content",
  ]);
});

test("user goes as safety_identifier", () => {
  const body = bodyOf(responsesCall({ request: { user: "user-7" } }));
  assert.equal(body.safety_identifier, "user-7");
  assert.equal("user" in body, false);
});

test("pass-through is forwarded, except what would break statelessness or the request", () => {
  const body = bodyOf(
    responsesCall({
      request: {
        passthrough: {
          previous_response_id: "resp_1",
          store: true,
          background: true,
          conversation: "conv_1",
          model: "evil",
          input: [],
          prediction: { type: "content", content: "x" },
          prompt_cache_key: "k1",
          metadata: { a: "b" },
          truncation: "auto",
        },
      },
    }),
    true,
  );
  for (const field of ["previous_response_id", "background", "conversation", "prediction"]) {
    assert.equal(field in body, false, field);
  }
  assert.equal(body.store, false);
  assert.equal(body.model, "upstream-model-1");
  assert.equal(body.input.length, 1);
  assert.equal(body.stream, true);
  assert.equal(body.prompt_cache_key, "k1");
  assert.deepEqual(body.metadata, { a: "b" });
  assert.equal(body.truncation, "auto");
});

test("excludedParams quirk applies here too, but never to model, input, stream or store", () => {
  const body = bodyOf(
    responsesCall({
      provider: {
        quirks: {
          excludedParams: ["parallel_tool_calls", "prompt_cache_key", "store", "model"],
          toolCallIdFormat: "any",
          maxTokensField: "max_completion_tokens",
        },
      },
      request: { parallelToolCalls: true, passthrough: { prompt_cache_key: "k" } },
    }),
  );
  assert.equal("parallel_tool_calls" in body, false);
  assert.equal("prompt_cache_key" in body, false);
  assert.equal(body.store, false);
  assert.equal(body.model, "upstream-model-1");
});

test("stop sequences cannot be expressed: invalid_request naming the field, not a silent drop", () => {
  assert.throws(() => bodyOf(responsesCall({ request: { stop: ["END"] } })), {
    code: "invalid_request",
    param: "stop",
  });
  assert.doesNotThrow(() => bodyOf(responsesCall({ request: { stop: [] } })));
});

test("items a Responses caller sent of types the gateway does not know go back in their places; other families' blocks do not", () => {
  const call = { type: "custom_tool_call", call_id: "call_1", name: "apply_patch", input: "patch" };
  const output = { type: "custom_tool_call_output", call_id: "call_1", output: "Done" };
  const body = bodyOf(
    responsesCall({
      request: {
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: "Patch it" }],
            extraBlocks: [
              {
                family: "anthropic_messages",
                param: "messages[0].content[1]",
                index: 1,
                block: { type: "search_result" },
              },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "text", text: "On it." },
              { type: "tool-call", id: "call_2", name: "shell", arguments: "{}" },
            ],
            extraBlocks: [{ family: "responses", param: "input[2]", index: 1, block: call }],
          },
          {
            role: "user",
            content: [],
            extraBlocks: [{ family: "responses", param: "input[4]", index: 0, block: output }],
          },
        ],
      },
    }),
  );
  assert.deepEqual(body.input, [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Patch it" }] },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "On it." }] },
    call,
    { type: "function_call", call_id: "call_2", name: "shell", arguments: "{}" },
    output,
  ]);
});
