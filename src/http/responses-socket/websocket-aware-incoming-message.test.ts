import assert from "node:assert/strict";
import { createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { test } from "node:test";
import { isWebSocketUpgrade, WebSocketAwareIncomingMessage } from "./websocket-aware-incoming-message.js";

/** Writes `request` on a fresh connection and returns all the server wrote back. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\r\n\r\n") && /served by (request|upgrade)/.test(text)) socket.end();
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    socket.write(request);
  });
}

test("with an upgrade listener, only a GET asking for websocket reaches it; h2c and the rest stay requests", async (t) => {
  const server = createServer({ IncomingMessage: WebSocketAwareIncomingMessage }, (incoming, outgoing) => {
    let body = "";
    incoming.on("data", (chunk) => {
      body += chunk;
    });
    incoming.on("end", () => outgoing.end(`served by request: ${incoming.method} body=${body}`));
  });
  server.on("upgrade", (_incoming, socket) =>
    socket.end(
      "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 17\r\n\r\nserved by upgrade",
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const h2c = await exchange(
    port,
    "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n" +
      "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Length: 5\r\n\r\nhello",
  );
  assert.match(h2c, /^HTTP\/1\.1 200 /);
  assert.match(h2c, /served by request: POST body=hello/);

  const postWebSocket = await exchange(
    port,
    "POST /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 2\r\n\r\nhi",
  );
  assert.match(postWebSocket, /served by request: POST body=hi/);

  const webSocket = await exchange(
    port,
    "GET /api/v1/responses HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\n\r\n",
  );
  assert.match(webSocket, /served by upgrade/);

  const plain = await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  assert.match(plain, /served by request: GET/);
});

test("isWebSocketUpgrade reads the Upgrade header's list, in any case", () => {
  assert.equal(isWebSocketUpgrade("websocket"), true);
  assert.equal(isWebSocketUpgrade("h2c, WebSocket"), true);
  assert.equal(isWebSocketUpgrade("h2c"), false);
  assert.equal(isWebSocketUpgrade(undefined), false);
});
