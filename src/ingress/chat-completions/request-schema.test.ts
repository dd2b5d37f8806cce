import assert from "node:assert/strict";
import { test } from "node:test";
import { describeSchemas } from "../../../test/helpers/describe-schemas.js";
import { REASONING_EFFORTS } from "../shared/reasoning-efforts.js";
import { chatCompletionRequestSchema, KNOWN_REQUEST_FIELDS } from "./request-schema.js";
import { chatCompletionChunkSchema, chatCompletionResponseSchema } from "./response-schema.js";

function generateSchemas() {
  return describeSchemas([
    chatCompletionRequestSchema,
    chatCompletionResponseSchema,
    chatCompletionChunkSchema,
  ]);
}

test("the OpenAPI description lists reasoning_effort low/medium/high while validation accepts all levels", () => {
  const request = generateSchemas().ChatCompletionRequest;
  assert.deepEqual(request.properties.reasoning_effort.enum, ["low", "medium", "high"]);
  for (const effort of REASONING_EFFORTS) {
    const parsed = chatCompletionRequestSchema.safeParse({
      model: "a/b",
      messages: [{ role: "user", content: "x" }],
      reasoning_effort: effort,
    });
    assert.ok(parsed.success, effort);
  }
});

test("the request schema documents every Chat Completions field, requires model and messages, and allows extras", () => {
  const request = generateSchemas().ChatCompletionRequest;
  const specFields = [
    "model",
    "models",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "response_format",
    "reasoning_effort",
    "stream",
    "stream_options",
    "plugins",
    "web_search_options",
    "hi_cache",
    "hi_strict",
    "hi_tool_events",
    "user",
    "service_tier",
    "n",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "min_p",
    "top_a",
    "repetition_penalty",
    "verbosity",
    "prediction",
    "modalities",
    "audio",
  ];
  assert.deepEqual(Object.keys(request.properties).sort(), [...specFields].sort());
  assert.deepEqual([...KNOWN_REQUEST_FIELDS].sort(), [...specFields].sort());
  assert.deepEqual(request.required, ["model", "messages"]);
  assert.notEqual(request.additionalProperties, false);
  assert.equal(request.properties.temperature.maximum, 2);
});

test("response schemas are named components", () => {
  const schemas = generateSchemas();
  assert.ok(schemas.ChatCompletion);
  assert.ok(schemas.ChatCompletionChunk);
  assert.ok(schemas.ChatCompletionUsage);
});
