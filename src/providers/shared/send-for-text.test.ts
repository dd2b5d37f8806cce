import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { createUpstreamHttpClient } from "./http-client.js";

const client = createUpstreamHttpClient({ maxErrorBodyBytes: 1024 });
const timeouts = { connectMs: 1000, headMs: 2000, idleMs: 2000 };

/** A `{}` POST to `url` with the default deadlines; `extra` overrides any field. */
function sendTo(url: string, extra: Partial<Parameters<typeof client.sendForText>[0]> = {}) {
  return client.sendForText({ url, headers: {}, body: "{}", timeouts, ...extra });
}
const servers: LoopbackServer[] = [];

after(async () => {
  await client.destroy();
  await Promise.all(servers.map((server) => server.close()));
});

interface LoopbackServer {
  url: string;
  /** TCP connections accepted so far. */
  connections(): number;
  /** Resolves when the connection of the request being answered closes (the client cut it). */
  nextClose(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback server whose every request is answered by `handle`, after its body was read. */
async function startServer(handle: (response: ServerResponse) => void): Promise<LoopbackServer> {
  let connections = 0;
  const closeWaiters: Array<() => void> = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => handle(response));
  });
  server.on("connection", (socket) => {
    connections += 1;
    socket.on("close", () => {
      for (const wake of closeWaiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const loopback: LoopbackServer = {
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    connections: () => connections,
    nextClose: () => new Promise<void>((resolve) => closeWaiters.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(loopback);
  return loopback;
}

const COMPLETION = JSON.stringify({ object: "chat.completion", choices: [{ message: { content: "Hi" } }] });

function answerJson(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(COMPLETION);
}

/** Writes the headers and the first part of a body, then stalls. */
function answerPartly(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.write('{"object":"chat.');
}

/** undici frees a connection a tick after its response ends; without a pause the pool opens another. */
async function letConnectionFree(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
}

function assertNoAbortListener(signal: AbortSignal): void {
  assert.equal(getEventListeners(signal, "abort").length, 0);
}

test("sendForText reads a whole JSON body, also one that arrives in many chunks", async () => {
  const long = JSON.stringify({ object: "chat.completion", text: "é".repeat(20_000) });
  let calls = 0;
  const server = await startServer((response) => {
    calls += 1;
    if (calls === 1) return answerJson(response);
    response.writeHead(200, { "content-type": "application/json" });
    const bytes = Buffer.from(long);
    // Split inside a two-byte character: decoding must happen after the chunks are joined.
    response.write(bytes.subarray(0, 1001));
    setTimeout(() => response.end(bytes.subarray(1001)), 10);
  });
  const signal = new AbortController().signal;
  const first = await sendTo(server.url, { signal });
  assert.equal(first.status, 200);
  assert.equal(first.headers["content-type"], "application/json");
  assert.equal(first.text, COMPLETION);
  assertNoAbortListener(signal);
  const second = await sendTo(server.url);
  assert.equal(second.text, long);
});

test("a body of megabytes decoded as it arrives keeps every character split between chunks", async () => {
  // Two-, three- and four-byte characters, sent in slices of an odd size: most boundaries fall
  // inside a character, and the body is long enough to be decoded chunk by chunk.
  const long = JSON.stringify({ text: "aé€😀".repeat(200_000) });
  const bytes = Buffer.from(long);
  const server = await startServer((response) => {
    response.writeHead(200, { "content-type": "application/json" });
    let offset = 0;
    const pump = () => {
      while (offset < bytes.byteLength) {
        const end = Math.min(offset + 65_537, bytes.byteLength);
        const slice = bytes.subarray(offset, end);
        offset = end;
        if (offset === bytes.byteLength) return void response.end(slice);
        if (!response.write(slice)) return void response.once("drain", pump);
      }
    };
    pump();
  });
  const answer = await sendTo(server.url, { maxBytes: 16 * 1024 * 1024 });
  assert.ok(bytes.byteLength > 1024 * 1024);
  assert.equal(answer.text.length, long.length);
  assert.equal(answer.text, long);
});

test("sequential sendForText calls reuse one connection", async () => {
  const server = await startServer(answerJson);
  for (let round = 0; round < 3; round += 1) {
    const response = await sendTo(server.url);
    assert.equal(JSON.parse(response.text).object, "chat.completion");
    await letConnectionFree();
  }
  assert.equal(server.connections(), 1);
});

test("sendForText enforces its size cap and drops the connection", async () => {
  const server = await startServer((response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write("x".repeat(3000));
    setTimeout(() => response.end("x".repeat(3000)), 10);
  });
  const closed = server.nextClose();
  await assert.rejects(
    sendTo(server.url, { maxBytes: 4096 }),
    (error: unknown) => error instanceof GatewayError && /size limit/.test(error.message),
  );
  await closed;
});

test("a body that stalls past the idle deadline fails as a provider timeout", async () => {
  const server = await startServer(answerPartly);
  await assert.rejects(
    sendTo(server.url, { timeouts: { ...timeouts, idleMs: 100 } }),
    (error: unknown) => error instanceof GatewayError && error.code === "provider_timeout",
  );
});

test("headers that do not come within the first-byte deadline fail as a provider timeout", async () => {
  const server = await startServer(() => {});
  await assert.rejects(
    sendTo(server.url, { timeouts: { ...timeouts, headMs: 100 } }),
    (error: unknown) => error instanceof GatewayError && /start answering/.test(error.message),
  );
});

test("an abort before headers rejects with the reason, cuts the request and leaves no listener", async () => {
  const server = await startServer(() => {});
  const controller = new AbortController();
  const reason = new Error("client went away");
  const closed = server.nextClose();
  const sending = sendTo(server.url, { signal: controller.signal });
  setTimeout(() => controller.abort(reason), 50);
  await assert.rejects(sending, (error: unknown) => error === reason);
  assertNoAbortListener(controller.signal);
  await closed;
});

test("an abort in the middle of the body rejects with the reason and leaves no listener", async () => {
  let answered!: () => void;
  const headersSent = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const server = await startServer((response) => {
    answerPartly(response);
    answered();
  });
  const controller = new AbortController();
  const closed = server.nextClose();
  const sending = sendTo(server.url, { signal: controller.signal });
  await headersSent;
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(
    sending,
    (error: unknown) => error instanceof DOMException && error.name === "AbortError",
  );
  assertNoAbortListener(controller.signal);
  await closed;
});

test("an already aborted signal rejects without sending anything", async () => {
  const server = await startServer(answerJson);
  const reason = new Error("gone before we started");
  await assert.rejects(
    sendTo(server.url, { signal: AbortSignal.abort(reason) }),
    (error: unknown) => error === reason,
  );
  assert.equal(server.connections(), 0);
});

test("non-2xx answers are classified from status, headers and body", async () => {
  const server = await startServer((response) => {
    response.writeHead(429, { "content-type": "application/json", "retry-after-ms": "4200" });
    response.end(JSON.stringify({ error: { message: "slow down" } }));
  });
  const signal = new AbortController().signal;
  await assert.rejects(
    sendTo(server.url, { signal }),
    (error: unknown) =>
      error instanceof GatewayError && error.code === "provider_rate_limit" && error.retryAfterSeconds === 5,
  );
  assertNoAbortListener(signal);
  await letConnectionFree();
  // A short error body is read to its end: the connection stays in the pool.
  await sendTo(server.url).catch(() => undefined);
  assert.equal(server.connections(), 1);
});

test("a long or stalled error body is cut and still classified by its status", async () => {
  let calls = 0;
  const server = await startServer((response) => {
    calls += 1;
    response.writeHead(503, { "content-type": "text/plain" });
    // The first answer is longer than the client reads (1 KiB here), the second never ends.
    if (calls === 1) response.end("x".repeat(5000));
    else response.write("partial");
  });
  const isUnavailable = (error: unknown) =>
    error instanceof GatewayError && error.code === "provider_unavailable" && error.upstreamStatus === 503;
  await assert.rejects(sendTo(server.url), isUnavailable);
  await assert.rejects(sendTo(server.url, { timeouts: { ...timeouts, idleMs: 100 } }), isUnavailable);
});

test("a refused connection fails as provider_unavailable", async () => {
  const server = await startServer(answerJson);
  const { url } = server;
  await server.close();
  await assert.rejects(
    sendTo(url),
    (error: unknown) => error instanceof GatewayError && /refused/.test(error.message),
  );
});
