import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { GatewayError } from "../errors/gateway-error.js";
import { readNodeJsonBody } from "./read-json-body.js";

/** A stand-in for the Node request: a byte stream with headers. */
function createIncoming(headers: Record<string, string> = {}) {
  const stream = new PassThrough();
  return Object.assign(stream, { headers }) as unknown as IncomingMessage & PassThrough;
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => assert.fail("expected a rejection"),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof GatewayError, `a GatewayError, got ${String(error)}`);
  return error;
}

test("reads and parses a body sent in several chunks", async () => {
  const incoming = createIncoming();
  const body = readNodeJsonBody(incoming, 100);
  incoming.write('{"model":');
  incoming.end('"a/b","n":1}');
  assert.deepEqual(await body, { model: "a/b", n: 1 });
});

test("an empty body and invalid JSON are invalid_request", async () => {
  const empty = createIncoming();
  const emptyBody = readNodeJsonBody(empty, 100);
  empty.end();
  const emptyError = await rejection(emptyBody);
  assert.equal(emptyError.code, "invalid_request");
  assert.match(emptyError.message, /empty/);

  const invalid = createIncoming();
  const invalidBody = readNodeJsonBody(invalid, 100);
  invalid.end("{not json");
  const invalidError = await rejection(invalidBody);
  assert.equal(invalidError.code, "invalid_request");
  assert.match(invalidError.message, /not valid JSON/);
});

test("a declared Content-Length over the cap is refused before reading", async () => {
  const incoming = createIncoming({ "content-length": "101" });
  const error = await rejection(readNodeJsonBody(incoming, 100));
  assert.equal(error.code, "payload_too_large");
  assert.equal(incoming.readableFlowing, null, "nothing was read");
});

test("an undeclared body is refused as soon as it passes the cap, and reading stops", async () => {
  const incoming = createIncoming();
  const body = readNodeJsonBody(incoming, 100);
  incoming.write(Buffer.alloc(60, 32));
  incoming.write(Buffer.alloc(60, 32));
  const error = await rejection(body);
  assert.equal(error.code, "payload_too_large");
  assert.equal(incoming.readableFlowing, false, "paused: the rest is left to the server's cleanup");
  assert.equal(incoming.listenerCount("data"), 0);
});

test("a client that left, before or while sending, rejects instead of hanging", async () => {
  const gone = createIncoming();
  gone.destroy();
  await assert.rejects(readNodeJsonBody(gone, 100), /closed the connection/);

  const leaving = createIncoming();
  const body = readNodeJsonBody(leaving, 100);
  leaving.write("{");
  leaving.destroy();
  await assert.rejects(body, /closed the connection/);
});
