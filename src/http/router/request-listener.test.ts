import assert from "node:assert/strict";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createLogger } from "../../logging/logger.js";
import type { GenerationExchange, GenerationHandler } from "../generation/handle-generation.js";
import { createNodeRouteHandler } from "../generation/node-route-handler.js";
import { createRouter } from "./create-app.js";
import { createInFlightRequests } from "./in-flight-requests.js";
import { createNodeHeaderReader } from "./node-header-reader.js";
import { createRequestListener } from "./request-listener.js";
import { sendJson } from "./send-json.js";

/**
 * The gateway's listener and router over a small route table: a POST whose handler answers on the
 * Node response (as the generation endpoints do) and a GET answered with a web Response.
 */
async function startListener(t: { after(fn: () => unknown): void }, direct: GenerationHandler) {
  const logLines: string[] = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => logLines.push(chunk.toString("utf8")));
  const router = createRouter(
    [
      {
        method: "GET",
        path: "/hello",
        summary: "A web Response",
        responses: {},
        handler: (c) => c.text("from the router"),
      },
      {
        method: "GET",
        path: "/files/{name}",
        summary: "A folder with one file",
        responses: {},
        handler: (c) => (c.req.param("name") === "a b" ? c.text("file a b") : c.notFound()),
      },
      {
        method: "POST",
        path: "/direct",
        summary: "An answer on the Node response",
        responses: {},
        handler: createNodeRouteHandler(direct),
      },
    ],
    createLogger("info", sink),
  );
  const server = createServer(createRequestListener({ router }));
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

test("a Node route reaches its handler with a request id, arrival time and headers, query ignored", async (t) => {
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

test("one router: a web route is served beside it; another method is 405 with Allow; an unknown path 404", async (t) => {
  const seen: GenerationExchange[] = [];
  const { port } = await startListener(t, echoHandler(seen));
  const hello = await fetch(`http://127.0.0.1:${port}/hello`);
  assert.equal(await hello.text(), "from the router");
  assert.match(hello.headers.get("x-request-id") ?? "", /^[A-Za-z0-9_-]{22}$/);
  const wrongMethod = await fetch(`http://127.0.0.1:${port}/direct`);
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get("allow"), "POST");
  assert.ok(wrongMethod.headers.get("x-request-id"));
  const unknown = await fetch(`http://127.0.0.1:${port}/nowhere`, { method: "POST", body: "{}" });
  assert.equal(unknown.status, 404);
  assert.ok(unknown.headers.get("x-request-id"));
  assert.equal(seen.length, 0);
});

test("HEAD is served by the GET route without a body; a parameter is decoded; a route's own notFound is 404", async (t) => {
  const { port } = await startListener(t, echoHandler([]));
  const head = await fetch(`http://127.0.0.1:${port}/hello`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), String("from the router".length));
  assert.equal(await head.text(), "");
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/files/a%20b`)).text(), "file a b");
  const missing = await fetch(`http://127.0.0.1:${port}/files/other`);
  assert.equal(missing.status, 404, "served for GET: not a 405");
  assert.equal(missing.headers.get("allow"), null);
  assert.ok(missing.headers.get("x-request-id"));
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

test("a request refused for want of room has one request line with its code and no secret", async (t) => {
  const lines: string[] = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => lines.push(chunk.toString("utf8")));
  const logger = createLogger("info", sink);
  const inFlight = createInFlightRequests(1);
  inFlight.startDraining();
  const server = createServer(createRequestListener({ router: createRouter([], logger), inFlight }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: "Bearer hi-refused-secret" },
    body: "{}",
  });
  assert.equal(response.status, 429);
  await response.arrayBuffer();
  // Request lines are handed to the log in groups, within the log's flush interval.
  const readRequestLines = () =>
    lines
      .join("")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === "request");
  for (let waited = 0; readRequestLines().length === 0 && waited < 2000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const requestLines = readRequestLines();
  assert.equal(requestLines.length, 1);
  assert.equal(requestLines[0].requestId, response.headers.get("x-request-id"));
  assert.equal(requestLines[0].status, 429);
  assert.equal(requestLines[0].errorCode, "rate_limit_exceeded");
  assert.equal(requestLines[0].path, "/api/v1/chat/completions");
  assert.ok(!lines.join("").includes("hi-refused-secret"));
});
