import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { readJsonBody, readNodeJsonBody } from "./read-json-body.js";

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

test("a compressed body is refused before it is read; identity is the body as is", async () => {
  for (const encoding of ["gzip", "deflate", "br", "gzip, identity", "x-custom"]) {
    const incoming = createIncoming({ "content-encoding": encoding });
    const error = await rejection(readNodeJsonBody(incoming, 100));
    assert.equal(error.code, "invalid_request");
    assert.equal(error.param, null);
    assert.match(error.message, /Content-Encoding .* is not supported: send the request body uncompressed/);
    assert.equal(incoming.readableFlowing, null, "nothing was read");
  }
  const web = new Request("http://gateway.test/", {
    method: "POST",
    headers: { "content-encoding": "gzip" },
    body: "{}",
  });
  assert.match((await rejection(readJsonBody(web, 100))).message, /Content-Encoding "gzip"/);

  const identity = createIncoming({ "content-encoding": "Identity" });
  const body = readNodeJsonBody(identity, 100);
  identity.end('{"a":1}');
  assert.deepEqual(await body, { a: 1 });
});

test("bytes that are not UTF-8 are invalid_request, not replaced by U+FFFD", async () => {
  // A lone surrogate half (CESU-8), an overlong "/", a truncated sequence, a byte UTF-8 never uses.
  for (const bytes of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xff]]) {
    const incoming = createIncoming();
    const body = readNodeJsonBody(incoming, 100);
    incoming.end(Buffer.concat([Buffer.from('{"text":"'), Buffer.from(bytes), Buffer.from('"}')]));
    const error = await rejection(body);
    assert.equal(error.code, "invalid_request");
    assert.match(error.message, /not valid UTF-8/);
  }
  // A lone surrogate written as a JSON escape is valid UTF-8 text, and JSON.
  const escaped = createIncoming();
  const body = readNodeJsonBody(escaped, 100);
  escaped.end('{"text":"\\ud800"}');
  assert.deepEqual(await body, { text: "\ud800" });
});
