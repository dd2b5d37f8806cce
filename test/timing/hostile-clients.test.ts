/**
 * Slow and hostile clients against a real gateway on loopback, over raw sockets where a client
 * library would not misbehave: headers and bodies trickled a byte per second, oversized headers,
 * request-smuggling probes, and more requests in flight than the instance takes. The limits are
 * set small here; docs/operations.md states their defaults. Floods of connections are tested in
 * connection-floods.test.ts.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { type TestContext, test } from "node:test";
import type { InstanceLimits } from "../../src/config/settings.js";
import { sleep } from "../helpers/disposable-servers.js";
import { buildChatCompletion, type FakeHandler, fakeReply } from "../helpers/fake-openai-upstream.js";
import {
  type InstanceLimitsHarness,
  startInstanceLimitsHarness,
} from "../helpers/instance-limits-harness.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

type Harness = InstanceLimitsHarness;

function startHarness(
  t: TestContext,
  instanceLimits: Partial<InstanceLimits>,
  handler?: FakeHandler,
): Promise<Harness> {
  return startInstanceLimitsHarness(t, "hostile", instanceLimits, handler);
}

function chat(harness: Harness, path = "/api/v1/chat/completions", signal?: AbortSignal): Promise<Response> {
  return fetch(`${harness.gateway.url}${path}`, {
    method: "POST",
    signal,
    headers: { Authorization: `Bearer ${harness.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
      ...(path.endsWith("/messages") ? { max_tokens: 64 } : {}),
    }),
  });
}

interface RawSocket {
  socket: Socket;
  /** Everything the server wrote. */
  received(): string;
  /** Resolves when the connection is closed (by either side), with when (performance.now()). */
  closed: Promise<number>;
}

/** A raw TCP connection to the gateway, connected when this resolves. */
async function openRaw(port: number): Promise<RawSocket> {
  const socket = connect(port, "127.0.0.1");
  let data = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    data += chunk;
  });
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now())));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("close", () => reject(new Error("closed before connecting")));
  });
  return { socket, received: () => data, closed };
}

/** Sends `text` on a fresh connection and returns what came back before the server closed it. */
async function exchangeRaw(port: number, text: string): Promise<string> {
  const raw = await openRaw(port);
  raw.socket.write(text);
  const timer = setTimeout(() => raw.socket.destroy(), 3_000);
  await raw.closed;
  clearTimeout(timer);
  return raw.received();
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const startedAt = performance.now();
  const value = await work();
  return { value, ms: performance.now() - startedAt };
}

test("300 connections trickling headers and 50 trickling bodies, a byte a second: normal requests are not delayed, and the trickles are cut at their deadlines", async (t) => {
  const harness = await startHarness(t, { headersTimeoutMs: 1_500, requestTimeoutMs: 3_000 });
  const before: number[] = [];
  for (let round = 0; round < 3; round++) {
    const { value: response, ms } = await timed(() => chat(harness));
    assert.equal(response.status, 200);
    before.push(ms);
  }
  const baseline = median(before);
  const header =
    "POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa";
  const openedAt = performance.now();
  const headerTricklers = await Promise.all(Array.from({ length: 300 }, () => openRaw(harness.port)));
  const bodyTricklers = await Promise.all(Array.from({ length: 50 }, () => openRaw(harness.port)));
  for (const raw of bodyTricklers) {
    raw.socket.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${harness.apiKey}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
    );
  }
  let sent = 0;
  const trickle = setInterval(() => {
    for (const raw of headerTricklers)
      if (!raw.socket.destroyed) raw.socket.write(header[sent % header.length]);
    for (const raw of bodyTricklers) if (!raw.socket.destroyed) raw.socket.write(sent === 0 ? "{" : " ");
    sent++;
  }, 1_000);
  t.after(() => {
    clearInterval(trickle);
    for (const raw of [...headerTricklers, ...bodyTricklers]) raw.socket.destroy();
  });

  // A normal request, several times while the trickles run, against the same gateway's latency
  // before they began (measured first, below); the median, so one stall of a busy machine
  // does not decide.
  await sleep(300);
  const trickled: number[] = [];
  const probes: number[] = [];
  for (let round = 0; round < 5; round++) {
    const { value: response, ms } = await timed(() => chat(harness));
    assert.equal(response.status, 200, await response.text());
    trickled.push(ms);
    const health = await timed(() => fetch(`${harness.gateway.url}/healthz`).then((r) => r.status));
    assert.equal(health.value, 200);
    probes.push(health.ms);
    await sleep(200);
  }
  const bound = Math.max(1_000, 3 * baseline);
  t.diagnostic(
    `before: ${baseline.toFixed(0)} ms; while trickled: ${trickled.map((ms) => ms.toFixed(0)).join(", ")} ms`,
  );
  assert.ok(
    median(trickled) < bound,
    `normal requests took ${trickled.join(", ")} ms (before: ${baseline} ms)`,
  );
  assert.ok(median(probes) < bound, `/healthz took ${probes.join(", ")} ms`);

  const headerClosedAt = await Promise.all(headerTricklers.map((raw) => withTimeout(raw.closed, 8_000)));
  const bodyClosedAt = await Promise.all(bodyTricklers.map((raw) => withTimeout(raw.closed, 10_000)));
  const lastHeader = Math.max(...headerClosedAt) - openedAt;
  const lastBody = Math.max(...bodyClosedAt) - openedAt;
  t.diagnostic(
    `trickled headers cut after ≤ ${lastHeader.toFixed(0)} ms, bodies after ≤ ${lastBody.toFixed(0)} ms`,
  );
  // The deadline plus the once-a-second check, plus slack for a loaded machine.
  assert.ok(lastHeader < 1_500 + 1_000 + 2_500, `header trickles lasted ${lastHeader.toFixed(0)} ms`);
  assert.ok(lastBody < 3_000 + 1_000 + 2_500, `body trickles lasted ${lastBody.toFixed(0)} ms`);
  assert.match(headerTricklers[0].received(), /^HTTP\/1\.1 408 /);
  assert.match(bodyTricklers[0].received(), /^HTTP\/1\.1 408 /);
  assert.equal(harness.upstream.requests.length, 8, "no trickled request reached the upstream");
});

test("oversized headers get 431; request smuggling probes get 400 and the connection closed, and the smuggled request never runs", async (t) => {
  const harness = await startHarness(t, { maxHeaderBytes: 8_192 });
  const request = (padding: number) =>
    `GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${"p".repeat(padding)}\r\nConnection: close\r\n\r\n`;
  assert.match(await exchangeRaw(harness.port, request(4_000)), /^HTTP\/1\.1 200 /);
  assert.match(
    await exchangeRaw(harness.port, request(12_000)),
    /^HTTP\/1\.1 431 /,
    "over the configured 8 KiB",
  );
  assert.match(await exchangeRaw(harness.port, request(64 * 1024)), /^HTTP\/1\.1 431 /);

  const smuggled =
    `POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${harness.apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: 70\r\n\r\n` +
    JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "smuggled" }] }).padEnd(70);
  const probes: Record<string, string> = {
    "Content-Length with Transfer-Encoding":
      "POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
      smuggled,
    "two different Content-Length":
      `POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n` +
      smuggled,
    "two equal Content-Length":
      "POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n" +
      smuggled,
    "Transfer-Encoding: chunked, identity":
      "POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" +
      smuggled,
    "a space before the colon": `POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length : 0\r\n\r\n${smuggled}`,
    "an obs-folded Transfer-Encoding":
      "POST /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n0\r\n\r\n" +
      smuggled,
  };
  for (const [name, text] of Object.entries(probes)) {
    const answer = await exchangeRaw(harness.port, text);
    assert.match(answer, /^HTTP\/1\.1 400 /, `${name}: ${answer.slice(0, 60)}`);
    assert.equal(answer.match(/HTTP\/1\.1 /g)?.length, 1, `${name}: one answer, then the connection closed`);
  }
  assert.equal(harness.upstream.requests.length, 0, "no smuggled request reached the upstream");
  const response = await chat(harness);
  assert.equal(response.status, 200, "the instance serves on after refusing them");
});

test("beyond the in-flight cap a request is refused at once with 429 and Retry-After in its format; probes still answer", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const harness = await startHarness(t, { maxRequestsInFlight: 4 }, async () => {
    await gate;
    return fakeReply.json(buildChatCompletion({ content: "done" }));
  });
  t.after(() => release());
  const held = Array.from({ length: 4 }, () => chat(harness));
  await harness.upstream.waitForRequests(4, 10_000);

  // Without the cap it would wait behind the others: give up after 3 s instead of hanging.
  const chatRefusal = await timed(() => chat(harness, undefined, AbortSignal.timeout(3_000)));
  assert.equal(chatRefusal.value.status, 429);
  assert.ok(chatRefusal.ms < 500, `refused after ${chatRefusal.ms.toFixed(0)} ms`);
  assert.equal(chatRefusal.value.headers.get("retry-after"), "1");
  assert.ok(chatRefusal.value.headers.get("x-request-id"));
  const chatBody = (await chatRefusal.value.json()) as { error: Record<string, unknown> };
  assert.equal(chatBody.error.code, "rate_limit_exceeded");
  assert.equal(chatBody.error.type, "rate_limit_error");
  assert.equal(chatBody.error.retry_after_seconds, 1);
  assert.match(String(chatBody.error.message), /maximum of 4 requests/);

  const messagesRefusal = await chat(harness, "/api/v1/messages", AbortSignal.timeout(3_000));
  assert.equal(messagesRefusal.status, 429);
  const messagesBody = (await messagesRefusal.json()) as { type: string; error: Record<string, unknown> };
  assert.equal(messagesBody.type, "error", "the messages format's envelope");
  assert.equal(messagesBody.error.type, "rate_limit_error");
  assert.equal(messagesBody.error.code, "rate_limit_exceeded");

  const lookup = await fetch(`${harness.gateway.url}/api/v1/models`, { signal: AbortSignal.timeout(3_000) });
  assert.equal(lookup.status, 429, "every route counts");
  await lookup.arrayBuffer();
  assert.equal((await fetch(`${harness.gateway.url}/healthz`)).status, 200);
  assert.equal((await fetch(`${harness.gateway.url}/readyz`)).status, 200);
  assert.equal(harness.upstream.requests.length, 4, "refused requests never reach the upstream");

  release();
  for (const response of await Promise.all(held)) assert.equal(response.status, 200);
  const after = await chat(harness);
  assert.equal(after.status, 200, "room again once the others finished");
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function withTimeout<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not within ${milliseconds} ms`)), milliseconds);
    }),
  ]).finally(() => clearTimeout(timer));
}
