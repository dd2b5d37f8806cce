import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { RESPONSE_HIGH_WATER_BYTES } from "./response-high-water.js";
import { sendJson } from "./send-json.js";

test("a JSON answer of many slices, in multi-byte characters: Content-Length is its bytes and the body arrives whole", async () => {
  // Past one slice, the body is encoded to bytes once and its length read from them.
  const text = "é€😀 ".repeat(RESPONSE_HIGH_WATER_BYTES);
  const body = JSON.stringify({ text });
  const server = createServer((_request, response) => sendJson(response, 200, {}, body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(Number(response.headers.get("content-length")), Buffer.byteLength(body));
    assert.equal(bytes.byteLength, Buffer.byteLength(body));
    assert.equal((JSON.parse(bytes.toString("utf8")) as { text: string }).text, text);
  } finally {
    server.close();
  }
});
