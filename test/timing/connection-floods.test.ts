/**
 * Connection floods (docs/operations.md, "Connection floods"): cap-many connections that send
 * nothing must not take the instance off the network. At the cap the longest-idle connection makes
 * room for a new one; only when every connection is busy is a new one closed. Connections that send
 * no request are closed after their own short deadline; a per-address cap, when set, applies the
 * same rule per client address. Upgraded sockets (Responses WebSockets) are busy, never evicted,
 * and the shutdown still closes them.
 *
 * The connection cap is set to 256 here so the flood opens quickly; its default (4,096) works the
 * same way, each new connection costing one constant-time eviction.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { InstanceLimits } from "../../src/config/settings.js";
import { sleep, waitFor } from "../helpers/disposable-servers.js";
import { buildChatCompletion, type FakeHandler, fakeReply } from "../helpers/fake-openai-upstream.js";
import {
  type InstanceLimitsHarness,
  startInstanceLimitsHarness,
} from "../helpers/instance-limits-harness.js";
import {
  exchangeOnNewConnection,
  openRawConnection,
  type RawConnection,
  rawGet,
  rawPostJson,
} from "../helpers/raw-connections.js";
import { ResponsesSocketClient, toSocketUrl } from "../helpers/responses-socket-client.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

const CAP = 256;
/** What a request from a new connection must answer within, flood or not. */
const ANSWER_WITHIN_MS = 1_000;
/** Deadlines far beyond the test, so only the mechanism under test closes connections. */
const LONG_DEADLINES: Partial<InstanceLimits> = {
  headersTimeoutMs: 120_000,
  requestTimeoutMs: 120_000,
  newConnectionTimeoutMs: 120_000,
};

type Harness = InstanceLimitsHarness;

function startHarness(
  t: TestContext,
  instanceLimits: Partial<InstanceLimits>,
  handler?: FakeHandler,
): Promise<Harness> {
  return startInstanceLimitsHarness(t, "floods", instanceLimits, handler);
}

/** `count` connections that send nothing, opened a few at a time, in order (the first is the oldest). */
async function openIdle(
  t: TestContext,
  port: number,
  count: number,
  localAddress?: string,
): Promise<RawConnection[]> {
  const opened: RawConnection[] = [];
  t.after(() => {
    for (const raw of opened) raw.socket.destroy();
  });
  for (let index = 0; index < count; index += 32) {
    const batch = Math.min(32, count - index);
    opened.push(
      ...(await Promise.all(Array.from({ length: batch }, () => openRawConnection(port, { localAddress })))),
    );
    // Their order of arrival decides which is the oldest: let this batch be accepted first.
    await sleep(20);
  }
  return opened;
}

function chatRequest(apiKey: string): string {
  return rawPostJson("/api/v1/chat/completions", apiKey, {
    model: TEST_MODEL,
    messages: [{ role: "user", content: "hi" }],
  });
}

test("at the cap, idle connections make room: /healthz, /readyz and a request from new connections answer within a second", async (t) => {
  const harness = await startHarness(t, { maxConnections: CAP, ...LONG_DEADLINES });
  const idle = await openIdle(t, harness.port, CAP);
  await sleep(200);
  assert.equal(idle.filter((raw) => raw.isClosed()).length, 0, "the cap holds them all");

  const answers: Array<{ name: string; answer: string; ms: number }> = [];
  for (let round = 0; round < 3; round++) {
    for (const [name, text] of [
      ["/healthz", rawGet("/healthz")],
      ["/readyz", rawGet("/readyz")],
      ["chat", chatRequest(harness.apiKey)],
    ] as const) {
      answers.push({ name, ...(await exchangeOnNewConnection(harness.port, text)) });
    }
  }
  t.diagnostic(answers.map(({ name, ms }) => `${name} ${ms.toFixed(0)} ms`).join(", "));
  for (const { name, answer, ms } of answers) {
    assert.match(answer, /^HTTP\/1\.1 200 /, `${name} answered: ${JSON.stringify(answer.slice(0, 80))}`);
    assert.ok(ms < ANSWER_WITHIN_MS, `${name} took ${ms.toFixed(0)} ms`);
  }
  assert.match(answers.at(-1)!.answer, /"chat\.completion"/);

  // The first new connection took the place of the oldest idle one; each later one the place
  // its predecessor left when it closed.
  await waitFor("the oldest idle connection closed", async () => idle[0].isClosed() || undefined, {
    timeoutMs: 2_000,
    intervalMs: 20,
  });
  assert.equal(idle.filter((raw) => raw.isClosed()).length, 1, "only the oldest");

  // A second flood of idle connections pushes out the first, oldest first, and still nobody waits:
  // the first of them takes the room left, each other one an old connection's place.
  const second = await openIdle(t, harness.port, CAP / 2);
  await waitFor("the older half closed", async () => idle[CAP / 2 - 1].isClosed() || undefined, {
    timeoutMs: 5_000,
    intervalMs: 20,
  });
  assert.equal(idle.filter((raw) => raw.isClosed()).length, CAP / 2);
  assert.equal(second.filter((raw) => raw.isClosed()).length, 0, "the newer ones stay");
  const after = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.match(after.answer, /^HTTP\/1\.1 200 /);
  assert.ok(after.ms < ANSWER_WITHIN_MS, `/healthz took ${after.ms.toFixed(0)} ms`);
});

test("when every connection is busy, a new one is closed; once a request ends its connection makes room", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const harness = await startHarness(t, { maxConnections: 20, ...LONG_DEADLINES }, async () => {
    await gate;
    return fakeReply.json(buildChatCompletion({ content: "done" }));
  });
  t.after(() => release());
  // Keep-alive requests: each connection stays open, idle, after its answer.
  const busy = await Promise.all(Array.from({ length: 20 }, () => openRawConnection(harness.port)));
  t.after(() => {
    for (const raw of busy) raw.socket.destroy();
  });
  for (const raw of busy) raw.socket.write(rawPostJsonKeepAlive(harness.apiKey));
  await harness.upstream.waitForRequests(20, 10_000);

  const refused = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.equal(refused.answer, "", "no answer on a connection when every connection is busy");

  release();
  await waitFor(
    "every held request answered",
    async () => busy.every((raw) => raw.received().includes('"done"')) || undefined,
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  const answered = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.match(answered.answer, /^HTTP\/1\.1 200 /);
  assert.equal(busy.filter((raw) => raw.isClosed()).length, 1, "one idle keep-alive connection made room");
});

function rawPostJsonKeepAlive(apiKey: string): string {
  return rawPostJson(
    "/api/v1/chat/completions",
    apiKey,
    { model: TEST_MODEL, messages: [{ role: "user", content: "hold" }] },
    true,
  );
}

test("a connection that sends no request is closed at its own deadline, before the header deadline; one that asked is kept", async (t) => {
  const harness = await startHarness(t, {
    newConnectionTimeoutMs: 500,
    headersTimeoutMs: 30_000,
    requestTimeoutMs: 30_000,
  });
  const openedAt = performance.now();
  const silent = await openIdle(t, harness.port, 50);
  const halfHeader = await openRawConnection(harness.port);
  halfHeader.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  const asked = await openRawConnection(harness.port);
  asked.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  t.after(() => {
    halfHeader.socket.destroy();
    asked.socket.destroy();
  });

  const closedAt = await Promise.all([...silent, halfHeader].map((raw) => raw.closed));
  const last = Math.max(...closedAt) - openedAt;
  t.diagnostic(`closed after ≤ ${last.toFixed(0)} ms`);
  // The deadline, plus slack for a loaded machine; the header deadline (30 s) is far off.
  assert.ok(last < 500 + 2_500, `silent connections lasted ${last.toFixed(0)} ms`);
  assert.equal(silent[0].received(), "", "closed without an answer: nothing was asked");
  assert.match(asked.received(), /^HTTP\/1\.1 200 /);
  assert.equal(asked.isClosed(), false, "a keep-alive connection that asked is not cut by this deadline");
});

test("the per-address cap: an address at its cap makes room among its own idle connections, or is refused when they are busy; other addresses are untouched", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const harness = await startHarness(
    t,
    { maxConnections: CAP, maxConnectionsPerAddress: 8, ...LONG_DEADLINES },
    async () => {
      await gate;
      return fakeReply.json(buildChatCompletion({ content: "done" }));
    },
  );
  t.after(() => release());
  // 127.0.0.2 stands for another client (the whole 127/8 is loopback).
  const other = await openIdle(t, harness.port, 8, "127.0.0.2");
  const mine = await openIdle(t, harness.port, 8, "127.0.0.1");
  const answered = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.match(answered.answer, /^HTTP\/1\.1 200 /, "a 9th connection from the address is served");
  await waitFor("its oldest idle connection closed", async () => mine[0].isClosed() || undefined, {
    timeoutMs: 2_000,
    intervalMs: 20,
  });
  assert.equal(mine.filter((raw) => raw.isClosed()).length, 1);
  assert.equal(other.filter((raw) => raw.isClosed()).length, 0, "another address's connections stay");

  // Eight requests in progress from one address: its next connection is refused, another's is not.
  for (const raw of mine) raw.socket.destroy();
  const busy = await Promise.all(Array.from({ length: 8 }, () => openRawConnection(harness.port)));
  t.after(() => {
    for (const raw of busy) raw.socket.destroy();
  });
  for (const raw of busy) raw.socket.write(rawPostJsonKeepAlive(harness.apiKey));
  await harness.upstream.waitForRequests(8, 10_000);
  const refused = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.equal(refused.answer, "", "refused: all of the address's connections are busy");
  const fromOther = await openRawConnection(harness.port, { localAddress: "127.0.0.2" });
  fromOther.socket.write(rawGet("/healthz"));
  await fromOther.closed;
  assert.match(fromOther.received(), /^HTTP\/1\.1 200 /, "another address is served");
});

test("a Responses WebSocket is busy: never evicted by a flood, and still closed (1001) by the shutdown", async (t) => {
  const harness = await startHarness(t, { maxConnections: 32, ...LONG_DEADLINES });
  const client = await ResponsesSocketClient.connect(toSocketUrl(harness.gateway.url), harness.apiKey);
  t.after(() => client.socket.terminate());
  const idle = await openIdle(t, harness.port, 31);
  // Twice as many again: each takes the place of an idle connection, never the WebSocket's.
  const flood = await openIdle(t, harness.port, 62);
  const { answer } = await exchangeOnNewConnection(harness.port, rawGet("/healthz"));
  assert.match(answer, /^HTTP\/1\.1 200 /);
  await waitFor(
    "the older half of the flood closed",
    async () => flood.filter((raw) => raw.isClosed()).length === 31 + 1 || undefined,
    { timeoutMs: 2_000, intervalMs: 20 },
  );
  await waitFor(
    "every idle connection evicted",
    async () => idle.every((raw) => raw.isClosed()) || undefined,
    {
      timeoutMs: 2_000,
      intervalMs: 20,
    },
  );
  assert.equal(client.socket.readyState, client.socket.OPEN, "the WebSocket was never taken for idle");
  const turn = await client.turn({ model: TEST_MODEL, input: "still here?" });
  assert.equal(turn.at(-1)?.type, "response.completed");

  const closing = harness.gateway.close();
  assert.equal((await client.closed).code, 1001);
  await closing;
});
