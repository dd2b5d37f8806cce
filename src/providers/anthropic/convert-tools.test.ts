import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { convertToolSetup } from "./convert-tools.js";

const schema = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer" } },
  required: ["city", "population"],
  additionalProperties: false,
};

function setup(request: Partial<CanonicalRequest>, thinking = false) {
  return convertToolSetup(createTestRequest(request), { thinking });
}

test("json_schema is emulated with a forced tool carrying the schema", () => {
  assert.deepEqual(
    setup({ responseFormat: { type: "json_schema", name: "city_info", schema, strict: true } }),
    {
      jsonToolName: "json_response",
      tools: [
        {
          name: "json_response",
          description: 'Answer with a JSON object following the "city_info" schema.',
          input_schema: schema,
        },
      ],
      toolChoice: { type: "tool", name: "json_response", disable_parallel_tool_use: true },
    },
  );
  const described = setup({
    responseFormat: { type: "json_schema", name: "x", schema, description: "The biggest city." },
  });
  assert.equal(described.tools?.[0].description, "The biggest city.");
});

test("json_object is emulated with an any-object schema; text format changes nothing", () => {
  assert.deepEqual(setup({ responseFormat: { type: "json_object" } }).tools, [
    { name: "json_response", description: "Answer with a JSON object.", input_schema: { type: "object" } },
  ]);
  assert.deepEqual(setup({ responseFormat: { type: "text" } }), {});
});

test("with caller tools the choice becomes any, so real tools may run before the JSON answer", () => {
  const result = setup({
    tools: [{ name: "search" }],
    toolChoice: { type: "auto" },
    responseFormat: { type: "json_schema", name: "r", schema },
  });
  assert.deepEqual(
    result.tools?.map((tool) => tool.name),
    ["search", "json_response"],
  );
  assert.deepEqual(result.toolChoice, { type: "any", disable_parallel_tool_use: true });
  // tool_choice none: the caller's tools must not run, so the JSON tool is forced.
  const none = setup({
    tools: [{ name: "search" }],
    toolChoice: { type: "none" },
    responseFormat: { type: "json_object" },
  });
  assert.deepEqual(none.toolChoice, { type: "tool", name: "json_response", disable_parallel_tool_use: true });
  // A caller forcing its own tool keeps that: this turn is that call.
  const forced = setup({
    tools: [{ name: "search" }],
    toolChoice: { type: "tool", name: "search" },
    responseFormat: { type: "json_object" },
  });
  assert.deepEqual(forced.toolChoice, { type: "tool", name: "search", disable_parallel_tool_use: true });
});

test("the JSON tool's name avoids a caller tool of the same name", () => {
  const result = setup({
    tools: [{ name: "json_response" }, { name: "json_response_2" }],
    toolChoice: { type: "none" },
    responseFormat: { type: "json_object" },
  });
  assert.equal(result.jsonToolName, "json_response_3");
  assert.deepEqual(result.toolChoice, {
    type: "tool",
    name: "json_response_3",
    disable_parallel_tool_use: true,
  });
});

test("with thinking on, json_schema goes native (output_config.format) and json_object is refused", () => {
  assert.deepEqual(setup({ responseFormat: { type: "json_schema", name: "r", schema } }, true), {
    outputFormat: { type: "json_schema", schema },
  });
  assert.throws(
    () => setup({ responseFormat: { type: "json_object" } }, true),
    (error: unknown) =>
      error instanceof GatewayError && error.code === "invalid_request" && error.param === "response_format",
  );
});
