import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { createLogger } from "../../logging/logger.js";
import { classifyCaught } from "./error-response.js";

function captureLog() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("info", destination) };
}

test("a route's bug is logged with its request id and answered as internal_error without its message", async () => {
  // Admin routes answered such errors 500 without a log line: nothing said what had failed.
  const { lines, logger } = captureLog();
  const error = classifyCaught(new TypeError("secret detail"), "req_1", logger);
  assert.equal(error.code, "internal_error");
  assert.doesNotMatch(error.message, /secret detail/);
  logger.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lines.length, 1);
  assert.equal(lines[0].requestId, "req_1");
  assert.equal((lines[0].err as { message?: string }).message, "secret detail");
});

test("a classified error is answered as it is, and is not logged as a bug", async () => {
  const { lines, logger } = captureLog();
  const thrown = GatewayError.invalidRequest("name is required", "name");
  assert.equal(classifyCaught(thrown, "req_2", logger), thrown);
  logger.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lines.length, 0);
});

test("an internal_error a route threw as a GatewayError is logged too", async () => {
  const { lines, logger } = captureLog();
  const thrown = new GatewayError("internal_error", "Internal error", { cause: new Error("disk full") });
  assert.equal(classifyCaught(thrown, "req_3", logger), thrown);
  logger.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lines.length, 1);
  assert.equal(lines[0].requestId, "req_3");
});
