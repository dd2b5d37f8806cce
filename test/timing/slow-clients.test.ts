/**
 * Clients that never read and clients that leave (docs/metering.md, "Clients that stop reading"):
 * reading from the upstream follows the client's pace, so a client that never reads costs bounded
 * memory; it is disconnected after `limits.client_read_timeout_seconds` and its upstream request
 * aborted; its bill never exceeds the output cap and keeps the usage the upstream already reported.
 * A client that disconnects has its upstream request aborted within a second and its record
 * settled. Real sockets on both sides: raw TCP clients, and a loopback upstream (Anthropic's wire)
 * that streams as fast as the gateway reads and records when its request is aborted.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { GenerationRecord } from "../../src/engine/generation-record.js";
import { assertLedgerMatches } from "../helpers/money-checks.js";
import { startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

/** What the upstream reports as the prompt in message_start, far from the gateway's estimate. */
const REPORTED_PROMPT_TOKENS = 3_000;
const OUTPUT_CAP = 4_000;
const PIECE = "All work and no play makes Jack a dull boy. ".repeat(200);

interface UpstreamExchange {
  /** The gateway's request id (its correlation header). */
  requestId: string;
  /** performance.now() when the gateway's request was aborted (its connection closed early). */
  abortedAt?: number;
  bytes: number;
}

/** The prompt that makes the upstream stream without end; any other gets one delta, then nothing. */
const ENDLESS = "Tell me an endless story";
const HOLD = "Tell me a long story";

/**
 * An Anthropic-wire upstream. For the ENDLESS prompt: message_start with the reported prompt, then
 * text deltas for as long as the gateway reads them (writes wait for 'drain'), never a
 * message_stop, ignoring the output cap as a broken or hostile upstream could. Otherwise: one
 * delta, then it waits. Non-streamed requests get no answer.
 */
async function startUpstream() {
  const exchanges: UpstreamExchange[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const exchange: UpstreamExchange = {
      requestId: String(request.headers["x-gateway-request-id"]),
      bytes: 0,
    };
    exchanges.push(exchange);
    response.on("close", () => {
      if (!response.writableFinished) exchange.abortedAt = performance.now();
    });
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const parsed = JSON.parse(body) as { stream?: boolean; messages: Array<{ content: unknown }> };
      if (!parsed.stream) return; // Never answered.
      const endless = JSON.stringify(parsed.messages).includes(ENDLESS);
      response.writeHead(200, { "content-type": "text/event-stream" });
      const send = (event: Record<string, unknown>) => {
        const frame = `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
        exchange.bytes += frame.length;
        return response.write(frame);
      };
      send({
        type: "message_start",
        message: {
          id: "msg_slow",
          type: "message",
          role: "assistant",
          model: "claude-slow",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: REPORTED_PROMPT_TOKENS, output_tokens: 1 },
        },
      });
      send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      const delta = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: PIECE } };
      if (!endless) {
        send(delta);
        return;
      }
      const pump = () => {
        while (!response.destroyed) if (!send(delta)) return void response.once("drain", pump);
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    exchanges,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startGatewayOn(upstreamBaseUrl: string) {
  return startTestGateway("embedded", {
    configOverrides: {
      providers: [
        {
          id: "fake",
          kind: "anthropic",
          base_url: upstreamBaseUrl,
          api_key_env: "FAKE_UPSTREAM_KEY",
          timeouts: { connect_ms: 2000, first_byte_ms: 5000, response_ms: 5000, idle_ms: 30_000 },
        },
      ],
      limits: { client_read_timeout_seconds: 1 },
    },
  });
}

/** A raw HTTP request on its own socket; the socket is paused at once: nothing is ever read. */
function openSocket(context: TestGateway, body: Record<string, unknown>): Socket {
  const json = JSON.stringify(body);
  const socket = connect(Number(new URL(context.url).port), "127.0.0.1");
  socket.write(
    `POST /api/v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${context.apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  socket.on("error", () => {});
  return socket;
}

/** The heap after a full collection, in bytes. */
function measureHeap(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; !check(); ) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe("clients that stop reading or leave", () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let context: TestGateway;
  before(async () => {
    upstream = await startUpstream();
    context = await startGatewayOn(upstream.baseUrl);
  });
  after(async () => {
    await context.close();
    await upstream.close();
  });

  test("clients that never read: bounded memory, dropped after the read deadline with their upstream aborted, billed within the cap from the reported prompt", async (t) => {
    const CLIENTS = 3;
    const heapBefore = measureHeap();
    const mine = () => upstream.exchanges.slice(earlier);
    const earlier = upstream.exchanges.length;
    const sockets = Array.from({ length: CLIENTS }, () =>
      openSocket(context, {
        model: TEST_MODEL,
        messages: [{ role: "user", content: ENDLESS }],
        max_tokens: OUTPUT_CAP,
        stream: true,
      }),
    );
    for (const socket of sockets) socket.pause();
    t.after(() => {
      for (const socket of sockets) socket.destroy();
    });
    // Once every socket buffer on the way is full, the upstreams stop: the gateway reads no further.
    assert.ok(await waitUntil(() => mine().length === CLIENTS, 10_000), "every request upstream");
    let previous = -1;
    assert.ok(
      await waitUntil(() => {
        const total = mine().reduce((sum, exchange) => sum + exchange.bytes, 0);
        const still = total === previous;
        previous = total;
        return still && total > 0;
      }, 10_000),
      "the upstreams stop once the clients' buffers are full",
    );
    const readAhead = mine().reduce((sum, exchange) => sum + exchange.bytes, 0);
    const heapGrowth = measureHeap() - heapBefore;
    t.diagnostic(
      `${CLIENTS} clients: upstreams wrote ${(readAhead / 1e6).toFixed(1)} MB; heap grew ${(heapGrowth / 1e6).toFixed(1)} MB`,
    );
    // What the clients never read waits in socket buffers (the kernel's), not in the gateway's heap.
    assert.ok(heapGrowth < readAhead / 4, `heap grew ${heapGrowth} bytes for ${readAhead} read ahead`);

    const startedWaiting = performance.now();
    assert.ok(
      await waitUntil(() => mine().every((exchange) => exchange.abortedAt !== undefined), 10_000),
      "every upstream request aborted",
    );
    const waited = performance.now() - startedWaiting;
    t.diagnostic(`all ${CLIENTS} dropped and their upstreams aborted ${Math.round(waited)} ms later`);

    for (const { requestId } of mine()) {
      const record = await waitForFinal(context, requestId);
      assert.equal(record.status, "cancelled");
      assert.equal(record.tokensPrompt, REPORTED_PROMPT_TOKENS, "the prompt the upstream reported");
      assert.ok(
        (record.tokensCompletion ?? 0) <= OUTPUT_CAP,
        `completion ${record.tokensCompletion} within the cap`,
      );
      // $2/M prompt and $8/M completion: tokens × USD per 1M tokens = micro-USD.
      assert.ok((record.costMicroUsd ?? 0) <= REPORTED_PROMPT_TOKENS * 2 + OUTPUT_CAP * 8);
    }
    const reserved = await context.gateway.spendGuard.readReserved(context.workspaceId, context.keyId);
    assert.equal(reserved?.workspaceMicroUsd, 0, "no reservation left");
  });

  test("a stream whose upstream ignores its cap keeps bounded memory however much it delivers, and is billed at most the cap", async (t) => {
    const heapBefore = measureHeap();
    const socket = openSocket(context, {
      model: TEST_MODEL,
      messages: [{ role: "user", content: ENDLESS }],
      max_tokens: OUTPUT_CAP,
      stream: true,
    });
    t.after(() => socket.destroy());
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    const DELIVERED = 8_000_000;
    assert.ok(await waitUntil(() => received >= DELIVERED, 30_000), `only ${received} bytes arrived`);
    socket.pause();
    const heapGrowth = measureHeap() - heapBefore;
    t.diagnostic(
      `${(received / 1e6).toFixed(1)} MB delivered; heap grew ${(heapGrowth / 1e6).toFixed(1)} MB`,
    );
    assert.ok(heapGrowth < 5_000_000, `the delivered output is not kept: heap grew ${heapGrowth} bytes`);
    socket.destroy();
    const record = await waitForFinal(context, upstream.exchanges.at(-1)!.requestId);
    assert.equal(record.status, "cancelled");
    assert.equal(
      record.tokensCompletion,
      OUTPUT_CAP,
      "billed at the cap, not for the millions of tokens delivered",
    );
    assert.equal(record.tokensPrompt, REPORTED_PROMPT_TOKENS);
  });

  test("a client that disconnects has its upstream request aborted within a second and its record settled, streamed or not", async (t) => {
    for (const stream of [true, false]) {
      const socket = openSocket(context, {
        model: TEST_MODEL,
        messages: [{ role: "user", content: HOLD }],
        max_tokens: OUTPUT_CAP,
        stream,
      });
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk;
      });
      const before = upstream.exchanges.length;
      assert.ok(
        await waitUntil(() => upstream.exchanges.length > before, 5_000),
        "the request reached upstream",
      );
      const exchange = upstream.exchanges.at(-1)!;
      if (stream) assert.ok(await waitUntil(() => received.includes("dull boy"), 5_000), "content arrived");
      else await new Promise((resolve) => setTimeout(resolve, 100));
      const leftAt = performance.now();
      socket.destroy();
      assert.ok(
        await waitUntil(() => exchange.abortedAt !== undefined, 1_000),
        "upstream aborted within 1 s",
      );
      t.diagnostic(
        `${stream ? "stream" : "non-streamed"}: upstream aborted ${Math.round(exchange.abortedAt! - leftAt)} ms after the client left`,
      );
      const record = await waitForFinal(context, exchange.requestId);
      assert.equal(record.status, "cancelled");
      assert.ok((record.costMicroUsd ?? 0) > 0, "the prompt (and what was delivered) is billed");
    }
  });

  test("the ledger equals the balance and what was billed; nothing is left reserved", async () => {
    await assertLedgerMatches({
      gatewayUrl: context.url,
      apiKey: context.apiKey,
      initialBalanceMicroUsd: 10_000_000,
      billedMicroUsd: billed,
    });
  });
});

/** Σ cost of every record the tests read (each read once, final). */
let billed = 0;

/** The record of `id` once final (settling follows the disconnect by a moment). */
async function waitForFinal(context: TestGateway, id: string): Promise<GenerationRecord> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const record = await context.gateway.store.generations.get(id, context.workspaceId);
    if ((record && record.status !== "in_progress") || Date.now() > deadline) {
      assert.ok(record, `a record for ${id}`);
      billed += record.costMicroUsd ?? 0;
      return record;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
