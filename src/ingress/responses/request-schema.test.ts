import assert from "node:assert/strict";
import { test } from "node:test";
import { describeSchemas } from "../../../test/helpers/describe-schemas.js";
import { KNOWN_REQUEST_FIELDS, responsesRequestSchema } from "./request-schema.js";
import { responsesResponseSchema } from "./response-schema.js";

function generateSchemas() {
  return describeSchemas([responsesRequestSchema, responsesResponseSchema]);
}

test("the request schema documents every Responses request field, requires model and input, and allows extras", () => {
  const request = generateSchemas().ResponsesRequest;
  const specFields = [
    "model",
    "models",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
    "include",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "seed",
    "stream",
    "text",
    "reasoning",
    "previous_response_id",
    "store",
    "background",
    "conversation",
    "prompt",
    "service_tier",
    "user",
    "safety_identifier",
    "hi_cache",
    "hi_strict",
    "hi_tool_events",
    // Not a Responses API field: documented because it is rejected ("stop sequences are not expressible").
    "stop",
  ];
  assert.deepEqual(Object.keys(request.properties).sort(), [...specFields].sort());
  assert.deepEqual([...KNOWN_REQUEST_FIELDS].sort(), [...specFields].sort());
  assert.deepEqual(request.required, ["model", "input"]);
  assert.notEqual(request.additionalProperties, false);
  assert.equal(request.properties.temperature.maximum, 2);
  assert.equal(request.properties.top_p.maximum, 1);
  assert.equal(request.properties.frequency_penalty.minimum, -2);
});

test("the response schema is a named component with the input and output item components", () => {
  const schemas = generateSchemas();
  for (const name of [
    "ResponsesResponse",
    "ResponsesUsage",
    "ResponsesOutputItem",
    "ResponsesInputItem",
    "ResponsesFunctionTool",
    "ResponsesServerTool",
  ]) {
    assert.ok(schemas[name], name);
  }
  assert.deepEqual(
    schemas.ResponsesResponse.required?.filter((field) =>
      ["id", "object", "status", "output", "usage"].includes(field),
    ),
    ["id", "object", "status", "output", "usage"],
  );
});

test("an encoded response parses with the documented response schema", async () => {
  const { encodeResponsesResult } = await import("./encode-result.js");
  const usage = {
    inputTokens: 1,
    outputTokens: 2,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
  const body = encodeResponsesResult(
    {
      content: [
        {
          type: "reasoning",
          text: "r",
          providerState: { providerKind: "k", upstreamModel: "m", signature: "s" },
        },
        { type: "text", text: "t" },
        { type: "tool-call", id: "c", name: "f", arguments: "{}" },
      ],
      finishReason: "tool-calls",
      usage,
    },
    { usage, costMicroUsd: 1, finishReason: "tool-calls" },
    { requestId: "r", model: "a/b", createdAt: 1 },
  );
  const parsed = responsesResponseSchema.strict().safeParse(body);
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
});
