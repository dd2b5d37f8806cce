import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../errors/gateway-error.js";
import { checkJsonDepth, MAX_JSON_DEPTH } from "./check-json-depth.js";

function nest(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 1; level < depth; level++) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

test("JSON up to the limit passes; one level more is an invalid_request naming where", () => {
  // The body is the first level, `metadata`'s value the second.
  checkJsonDepth({ model: "m", metadata: nest(MAX_JSON_DEPTH) });
  assert.throws(
    () => checkJsonDepth({ model: "m", metadata: nest(MAX_JSON_DEPTH + 1) }),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === "invalid_request" &&
      error.param?.startsWith("metadata") === true &&
      error.message.startsWith(`${error.param} is nested more than 128 levels deep`),
  );
});

test("100,000 levels are refused at once, without overflowing the stack", () => {
  const body = JSON.parse(`{"tools":[{"parameters":${'{"p":'.repeat(100_000)}1${"}".repeat(100_000)}}]}`);
  const started = performance.now();
  assert.throws(() => checkJsonDepth(body), { code: "invalid_request", param: "tools[0].parameters.p" });
  assert.ok(performance.now() - started < 100);
});

test("wide bodies are walked once: 200,000 shallow objects in milliseconds", () => {
  const body = {
    messages: Array.from({ length: 200_000 }, () => ({ role: "user", content: [{ type: "text" }] })),
  };
  const started = performance.now();
  checkJsonDepth(body);
  assert.ok(performance.now() - started < 500);
});
