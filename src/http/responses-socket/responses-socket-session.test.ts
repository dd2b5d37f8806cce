/**
 * The session's own deadlines on real sockets over loopback: the idle deadline and the keep-alive.
 * No message is sent, so no turn runs: the authenticator and the engine are never reached.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import WebSocket, { WebSocketServer } from "ws";
import { createResponsesFormat } from "../../ingress/responses/index.js";
import { createLogger } from "../../logging/logger.js";
import { ResponsesSocketSession, type ResponsesSocketSessionDeps } from "./responses-socket-session.js";

function unused(): never {
  throw new Error("no turn runs in these tests");
}

async function startSessions(
  t: TestContext,
  timing: Pick<ResponsesSocketSessionDeps, "idleTimeoutMs" | "pingIntervalMs" | "clientReadTimeoutMs">,
): Promise<string> {
  const deps: ResponsesSocketSessionDeps = {
    format: createResponsesFormat(),
    authenticator: { authenticate: unused } as unknown as ResponsesSocketSessionDeps["authenticator"],
    generation: {
      engine: undefined as never,
      requestShape: { maxMessages: 1, maxContentParts: 1, maxTools: 1 },
    },
    maxMessageBytes: 1024,
    logger: createLogger("silent"),
    report: () => {},
    ...timing,
  };
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  server.on("connection", (socket) => {
    new ResponsesSocketSession(
      socket,
      { apiKey: "k", headers: { get: () => null }, traceparent: undefined, tracestate: undefined },
      deps,
    );
  });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function open(url: string, autoPong = true): Promise<WebSocket> {
  const socket = new WebSocket(url, { autoPong });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
}

test("a socket with no turn and no message for the idle deadline is closed with 1000", async (t) => {
  const url = await startSessions(t, {
    idleTimeoutMs: 200,
    pingIntervalMs: 60_000,
    clientReadTimeoutMs: 60_000,
  });
  const openedAt = performance.now();
  const socket = await open(url);
  const { code, reason } = await closed(socket);
  assert.equal(code, 1000);
  assert.equal(reason, "idle timeout");
  assert.ok(performance.now() - openedAt >= 190, "not before the deadline (timer granularity aside)");
});

test("keep-alive: the server pings; a client that answers stays, one that answers none is dropped", async (t) => {
  const url = await startSessions(t, {
    idleTimeoutMs: 60_000,
    pingIntervalMs: 50,
    clientReadTimeoutMs: 2_000,
  });
  const answering = await open(url);
  const silent = await open(url, false);
  const silentClosed = closed(silent);
  let pings = 0;
  await new Promise<void>((resolve) => {
    answering.on("ping", () => {
      if (++pings === 10) resolve();
    });
  });
  assert.equal(answering.readyState, WebSocket.OPEN, "a client that answers every ping is kept");
  const silentAt = performance.now();
  const { code } = await silentClosed;
  // Dropped without a closing handshake: the client sees an abnormal closure.
  assert.equal(code, 1006);
  assert.ok(performance.now() - silentAt < 10_000);
  answering.close();
  await closed(answering);
});
