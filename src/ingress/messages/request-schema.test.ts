import assert from "node:assert/strict";
import { test } from "node:test";
import { describeSchemas } from "../../../test/helpers/describe-schemas.js";
import {
  KNOWN_REQUEST_FIELDS,
  messagesCountTokensRequestSchema,
  messagesRequestSchema,
} from "./request-schema.js";
import {
  messagesCountTokensResponseSchema,
  messagesResponseSchema,
  messagesStreamEventSchema,
} from "./response-schema.js";

function generateSchemas() {
  return describeSchemas([
    messagesRequestSchema,
    messagesCountTokensRequestSchema,
    messagesResponseSchema,
    messagesStreamEventSchema,
    messagesCountTokensResponseSchema,
  ]);
}

const SPEC_FIELDS = [
  "model",
  "max_tokens",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "thinking",
  "output_config",
  "metadata",
  "plugins",
  "hi_cache",
  "hi_strict",
  "hi_tool_events",
];

test("the request schema documents every Messages request field and requires model, max_tokens and messages", () => {
  const schemas = generateSchemas();
  const request = schemas.MessagesRequest;
  for (const field of SPEC_FIELDS) {
    assert.ok(field in request.properties, field);
    assert.ok(KNOWN_REQUEST_FIELDS.has(field), field);
  }
  assert.deepEqual(request.required?.sort(), ["max_tokens", "messages", "model"]);
  assert.equal(request.properties.temperature.maximum, 1, "temperature is 0..1 in this format");
  assert.deepEqual(schemas.MessagesCountTokensRequest.required?.sort(), ["messages", "model"]);
});

test("the response schema lists the message fields and every stop reason", () => {
  const response = generateSchemas().MessagesResponse;
  assert.deepEqual(response.required?.sort(), [
    "content",
    "id",
    "model",
    "role",
    "stop_reason",
    "stop_sequence",
    "type",
    "usage",
  ]);
  assert.deepEqual(response.properties.stop_reason.enum?.sort(), [
    "end_turn",
    "max_tokens",
    "model_context_window_exceeded",
    "pause_turn",
    "refusal",
    "stop_sequence",
    "tool_use",
  ]);
});
