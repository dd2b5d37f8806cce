import assert from "node:assert/strict";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { Hono } from "hono";
import { createLogger } from "../logging/logger.js";
import type { GenerationExchange, GenerationHandler } from "./handle-generation.js";
import { createNodeHeaderReader } from "./node-header-reader.js";
import { createRequestListener } from "./request-listener.js";
import { sendJson } from "./send-json.js";

/** A listener with one direct route and a Hono app behind it, on a loopback port. */
async function startListener(t: { after(fn: () => unknown): void }, direct: GenerationHandler) {
  const logLines: string[] = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => logLines.push(chunk.toString("utf8")));
  const app = new Hono();
  app.get("/hello", (c) => c.text("from hono"));
  app.post("/direct", (c) => c.text("hono served the direct path"));
  const server = createServer(
    createRequestListener({
      fetch: app.fetch,
      directPosts: new Map([["/direct", direct]]),
      logger: createLogger("info", sink),
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, logLines };
}

/** A handler that answers from what the exchange carries, reading the body only when asked to. */
function echoHandler(seen: GenerationExchange[]): GenerationHandler {
  return async (exchange) => {
    seen.push(exchange);
    sendJson(
      exchange.outgoing,
      200,
      { "Content-Type": "application/json", "X-Request-Id": exchange.requestId },
      "{}",
    );
  };
}

test("POST to a direct path reaches its handler with a request id and arrival time, query ignored", async (t) => {
  const seen: GenerationExchange[] = [];
  const { port } = await startListener(t, echoHandler(seen));
  const before = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/direct?x=1`, {
    method: "POST",
    headers: { "x-test": "a" },
    body: "{}",
  });
  assert.equal(response.status, 200);
  assert.equal(seen.length, 1);
  const [exchange] = seen;
  assert.match(exchange!.requestId, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(response.headers.get("x-request-id"), exchange!.requestId);
  assert.ok(exchange!.startedAt >= before && exchange!.startedAt <= performance.now());
  assert.equal(exchange!.headers.get("X-Test"), "a");
});

test("other methods and paths go to Hono", async (t) => {
  const seen: GenerationExchange[] = [];
  const { port } = await startListener(t, echoHandler(seen));
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/hello`)).text(), "from hono");
  assert.equal((await fetch(`http://127.0.0.1:${port}/direct`)).status, 404, "GET is not the direct route");
  assert.equal(seen.length, 0);
});

test("an unhandled error becomes a logged 500 in the common envelope, with the request id", async (t) => {
  const { port, logLines } = await startListener(t, async () => {
    throw new Error("boom");
  });
  const response = await fetch(`http://127.0.0.1:${port}/direct`, { method: "POST", body: "{}" });
  assert.equal(response.status, 500);
  const requestId = response.headers.get("x-request-id");
  assert.ok(requestId);
  const body = (await response.json()) as { error: { code: string } };
  assert.equal(body.error.code, "internal_error");
  assert.ok(
    logLines.some((line) => line.includes("unhandled error") && line.includes(requestId)),
    logLines.join(""),
  );
});

/** Two requests on one socket: the first is answered without its body being read. */
function twoRequestsOnOneSocket(port: number, firstBody: string, declaredLength: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if ((received.match(/HTTP\/1\.1 200/g) ?? []).length === 2) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.write(
      `POST /direct HTTP/1.1\r\nHost: x\r\nContent-Length: ${declaredLength}\r\n\r\n${firstBody}` +
        "POST /direct HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
    );
  });
}

test("an answer sent before the body was read leaves the keep-alive connection usable for the next request", async (t) => {
  const seen: GenerationExchange[] = [];
  const answer = echoHandler(seen);
  // As a body over the size cap: its first chunk read, then the reading stopped and answered.
  const { port } = await startListener(
    t,
    (exchange) =>
      new Promise<void>((resolve) => {
        exchange.incoming.once("data", () => {
          exchange.incoming.pause();
          resolve(answer(exchange));
        });
      }),
  );
  const body = "x".repeat(100_000);
  const received = await twoRequestsOnOneSocket(port, body, body.length);
  assert.equal((received.match(/HTTP\/1\.1 200/g) ?? []).length, 2, received.slice(0, 300));
  assert.equal(seen.length, 2);
});

test("a body that never ends after the answer closes the connection instead of holding it", async (t) => {
  const { port } = await startListener(t, echoHandler([]));
  const started = Date.now();
  const closed = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    // Declares 1 MB and sends 10 bytes: the rest never comes.
    socket.write("POST /direct HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n0123456789");
  });
  assert.match(closed, /HTTP\/1\.1 200/);
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 400 && elapsed < 5_000, `closed after ${elapsed} ms`);
});

test("the Node header reader reads like web Headers: any case, repeated lines joined, null when absent", async (t) => {
  let reader: ReturnType<typeof createNodeHeaderReader> | undefined;
  const server = createServer((incoming: IncomingMessage, outgoing) => {
    reader = createNodeHeaderReader(incoming);
    outgoing.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port, method: "POST", path: "/", agent: false },
      (response) => {
        response.resume();
        response.on("end", resolve);
      },
    );
    request.on("error", reject);
    // Two Authorization lines: Node's `headers` keeps the first, web Headers join them.
    request.setHeader("Authorization", ["Bearer one", "Bearer two"]);
    request.setHeader("Anthropic-Beta", ["a,b", "c"]);
    request.end();
  });
  const expected = new Headers([
    ["authorization", "Bearer one"],
    ["authorization", "Bearer two"],
    ["anthropic-beta", "a,b"],
    ["anthropic-beta", "c"],
  ]);
  for (const name of ["authorization", "AUTHORIZATION", "anthropic-beta", "x-api-key"]) {
    assert.equal(reader!.get(name), expected.get(name), name);
  }
  assert.equal(reader!.get("authorization"), "Bearer one, Bearer two");
});
