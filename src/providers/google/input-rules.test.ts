import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../../test/helpers/adapter-inputs.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { GOOGLE_INPUT_RULES } from "./input-rules.js";

test("Gemini images: 258 a 768-px tile, at least a current model's 1,120; a URL has no bound", () => {
  assert.equal(GOOGLE_INPUT_RULES.imageTokens({ width: 300, height: 300 }), 1_120);
  assert.equal(GOOGLE_INPUT_RULES.imageTokens({ width: 4_000, height: 3_000 }), 6 * 4 * 258);
  assert.equal(GOOGLE_INPUT_RULES.imageTokens(undefined), Number.POSITIVE_INFINITY);
});

test("Gemini schemas: what inlining `$ref`s adds is measured; a schema bomb is an invalid_request", () => {
  const address = {
    type: "object",
    description: "A postal address with street, number, postcode and city, as printed on a letter.",
    properties: { street: { type: "string" }, postcode: { type: "string" }, city: { type: "string" } },
  };
  const ref = { $ref: "#/$defs/address" };
  const parameters = {
    type: "object",
    properties: { home: ref, work: ref, billing: ref },
    $defs: { address },
  };
  const request = createTestRequest({ tools: [{ name: "route", parameters }] });
  const added = GOOGLE_INPUT_RULES.measureAddedBytes?.(request) ?? 0;
  // Three copies of the address where the caller sent one: two more copies' worth, less the refs.
  assert.ok(added > JSON.stringify(address).length, `${added}`);

  const definitions: Record<string, unknown> = {};
  for (let level = 0; level < 30; level++) {
    const next = `#/$defs/d${level + 1}`;
    definitions[`d${level}`] = { type: "object", properties: { a: { $ref: next }, b: { $ref: next } } };
  }
  const bomb = createTestRequest({
    tools: [{ name: "bomb", parameters: { $ref: "#/$defs/d0", $defs: definitions } }],
  });
  const started = performance.now();
  assert.throws(
    () => GOOGLE_INPUT_RULES.measureAddedBytes?.(bomb),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === "invalid_request" &&
      error.param === "tools" &&
      /function "bomb"/.test(error.message),
  );
  assert.ok(performance.now() - started < 1_000, "refused within the budget, not after 2^30 copies");
});
