/**
 * Clients that never read (docs/operations.md, "Clients that do not read"): a real gateway
 * process, 100 raw connections that each ask for a 6 MB answer and never read a byte. The gateway
 * queues at most its high-water mark per connection and stops pulling from the upstream behind
 * it, so its memory grows by a bounded amount and `/healthz` keeps answering; every such client is
 * disconnected once it has taken nothing for `limits.client_read_timeout_seconds` (which also
 * aborts a stream's upstream request). A non-streamed answer is held once (its bytes) until then,
 * and is let go.
 *
 * The operating system's socket buffers are outside the gateway's memory: on loopback the kernel
 * takes about 4 MB of each answer before the connection is full, whatever the gateway does (Node
 * has no way to set a TCP socket's send buffer).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import { sleep } from "../helpers/disposable-servers.js";
import {
  type EmbeddedGatewaySetup,
  type GatewayProcess,
  prepareEmbeddedGateway,
  startGatewayProcess,
} from "../helpers/gateway-process.js";
import { type HealthProbe, startHealthProbe } from "../helpers/health-prober.js";
import { openRawConnection, type RawConnection, rawPostJson } from "../helpers/raw-connections.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

const CLIENTS = 100;
const ANSWER_CHARACTERS = 6_000_000;
const DELTA = "All work and no play makes Jack a dull boy. ".repeat(90);
const READ_TIMEOUT_SECONDS = 2;
/** What the gateway may hold of complete answers waiting for their clients (`limits.held_answers_bytes`). */
const HELD_ANSWERS_BYTES = 64 * 1024 * 1024;
/**
 * What 100 never-reading clients of a stream may add to the gateway's resident memory: the goal of
 * docs/operations.md ("Clients that do not read"), less than 64 MB. On loopback the kernel takes
 * about 4 MB of each answer before a connection is full, so the gateway encodes some 400 MB for
 * these clients; streams with data waiting take turns at it (src/providers/shared/stream-turns.ts),
 * so that work's garbage dies young. What remains is each waiting stream's buffers (16 KiB marks
 * behind its socket and on its upstream body, the network chunk it has read) and what V8 keeps
 * between collections; docs/operations.md has the measured spread.
 */
const STREAM_MEMORY_BOUND_BYTES = 64 * 1024 * 1024;
/**
 * `/healthz` while the gateway encodes those 400 MB, beyond its delay when idle. A turn of work is
 * bounded by the event loop's budget (loop-turn.ts), so what is left is a full collection's pause
 * and the machine's other load. The same bound holds for 100 non-streamed answers of 6 MB that end
 * together: each is decoded and parsed in a turn of its own (long-steps.ts). The bound leaves room
 * for a loaded CI machine; docs/operations.md has the measured figures.
 */
const HEALTH_BOUND_MS = 1_000;
/**
 * Reading what the kernel holds for the 100 clients (about 400 MB) once they were dropped is the
 * test's own work, slow on a loaded machine.
 */
const DRAIN_CLIENTS_MS = 90_000;
/**
 * How long after the read deadline every never-reading client must be disconnected: its timer
 * fires late while the event loop is behind (seconds, on a loaded machine).
 */
const DROP_WITHIN_MS = 30_000;

interface UpstreamExchange {
  stream: boolean;
  /** Bytes the upstream handed to its socket (it waits for 'drain' like the gateway does). */
  bytes: number;
}

/** An OpenAI-compatible upstream answering every request with ANSWER_CHARACTERS of text. */
async function startUpstream() {
  const exchanges: UpstreamExchange[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const stream = (JSON.parse(body) as { stream?: boolean }).stream === true;
      const exchange: UpstreamExchange = { stream, bytes: 0 };
      exchanges.push(exchange);
      const usage = { prompt_tokens: 12, completion_tokens: 4_000, total_tokens: 4_012 };
      if (!stream) {
        const text = DELTA.repeat(Math.ceil(ANSWER_CHARACTERS / DELTA.length));
        const json = JSON.stringify({
          id: "chatcmpl-big",
          object: "chat.completion",
          created: 1,
          model: "fake-upstream-model",
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          usage,
        });
        exchange.bytes = json.length;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(json);
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({
          id: "chatcmpl-big",
          object: "chat.completion.chunk",
          created: 1,
          model: "fake-upstream-model",
          choices: [{ index: 0, delta, finish_reason: extra.finish_reason ?? null }],
          ...(extra.usage ? { usage: extra.usage } : {}),
        })}\n\n`;
      const frame = chunk({ content: DELTA });
      let sent = 0;
      const pump = () => {
        while (!response.destroyed && sent < ANSWER_CHARACTERS) {
          sent += DELTA.length;
          exchange.bytes += frame.length;
          if (!response.write(frame)) return void response.once("drain", pump);
        }
        if (response.destroyed) return;
        response.end(`${chunk({}, { finish_reason: "stop", usage })}data: [DONE]\n\n`);
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    exchanges,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The gateway process's resident memory, in bytes (Linux: /proc/<pid>/status). */
function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) * 1024;
}

/** The kernel's send and receive queues of every loopback TCP connection, by "local remote" port. */
function readTcpQueues(): Map<string, { tx: number; rx: number }> {
  const queues = new Map<string, { tx: number; rx: number }>();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5) continue;
    const port = (address: string) => Number.parseInt(address.split(":")[1]!, 16);
    const [tx, rx] = fields[4]!.split(":").map((hex) => Number.parseInt(hex, 16));
    queues.set(`${port(fields[1]!)} ${port(fields[2]!)}`, { tx: tx!, rx: rx! });
  }
  return queues;
}

/** What the kernel holds of the connection between these ports: sent, not yet read. */
function inKernel(queues: Map<string, { tx: number; rx: number }>, sender: number, receiver: number): number {
  return (queues.get(`${sender} ${receiver}`)?.tx ?? 0) + (queues.get(`${receiver} ${sender}`)?.rx ?? 0);
}

/** How many of the gateway's connections to these client ports it has not closed yet. */
function stillOpenOnGateway(gatewayPort: number, clientPorts: number[]): number {
  const established = new Set<string>();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // State 01: ESTABLISHED. A socket the gateway closed is in FIN_WAIT or gone.
    if (fields.length < 5 || fields[3] !== "01") continue;
    const port = (address: string) => Number.parseInt(address.split(":")[1]!, 16);
    established.add(`${port(fields[1]!)} ${port(fields[2]!)}`);
  }
  return clientPorts.filter((port) => established.has(`${gatewayPort} ${port}`)).length;
}

/** What the clients on these ports hold unread (the answers that reached them). */
function unreadBytes(gatewayPort: number, clientPorts: number[]): number {
  const queues = readTcpQueues();
  return clientPorts.reduce((sum, port) => sum + inKernel(queues, gatewayPort, port), 0);
}

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let setup: EmbeddedGatewaySetup;
let gateway: GatewayProcess;
let apiKey: string;
let probe: HealthProbe;
/** The body of a whole non-streamed answer, in bytes (from the warm-up). */
let nonStreamedAnswerBytes = 0;

before(async () => {
  upstream = await startUpstream();
  setup = await prepareEmbeddedGateway(
    createTestConfigFile(upstream.baseUrl, {
      limits: { client_read_timeout_seconds: READ_TIMEOUT_SECONDS, held_answers_bytes: HELD_ANSWERS_BYTES },
    }),
    { FAKE_UPSTREAM_KEY: "sk-upstream" },
  );
  // Starting a process that compiles its TypeScript is slow on a busy machine; not what is tested.
  gateway = await startGatewayProcess({ env: setup.env, readyTimeoutMs: 120_000 });
  const admin = createHttpAdminClient(gateway.url, setup.secret);
  const workspace = await admin.createWorkspace({ name: "never-reading", creditsUsd: "100000" });
  ({ secret: apiKey } = await admin.createKey({ workspaceId: workspace.id }));
  probe = startHealthProbe(gateway.url, { raisePriority: true });
  // A running instance has served whole answers before: its heap has grown to its working size.
  for (const stream of [true, false]) {
    const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }], stream }),
    });
    assert.equal(response.status, 200);
    const body = Buffer.from(await response.arrayBuffer());
    assert.ok(body.byteLength > ANSWER_CHARACTERS);
    if (!stream) nonStreamedAnswerBytes = body.byteLength;
  }
});

after(async () => {
  await probe?.close();
  await gateway?.stop();
  await setup?.cleanup();
  await upstream?.close();
});

interface Flood {
  clients: RawConnection[];
  exchanges: UpstreamExchange[];
  memoryGrowth: number;
  /** The most the gateway's `hi_gateway_held_answer_bytes` showed meanwhile. */
  mostHeldAnswerBytes: number;
  slowestHealthMs: number;
  idleHealthMs: number;
}

/** CLIENTS connections that each ask for the answer and never read; runs until the upstreams stop. */
async function flood(stream: boolean): Promise<Flood> {
  const port = Number(new URL(gateway.url).port);
  const idle = await probe.during(() => sleep(300));
  const baseline = residentBytes(gateway.pid);
  let peak = baseline;
  let mostHeld = 0;
  const firstExchange = upstream.exchanges.length;
  const exchanges = () => upstream.exchanges.slice(firstExchange);
  const request = rawPostJson(
    "/api/v1/chat/completions",
    apiKey,
    { model: TEST_MODEL, messages: [{ role: "user", content: "a long answer" }], stream },
    true,
  );
  const clients: RawConnection[] = [];
  const { slowestMs } = await probe.during(async () => {
    for (let index = 0; index < CLIENTS; index++) {
      const client = await openRawConnection(port, { read: false });
      clients.push(client);
      client.socket.write(request);
    }
    // Until nothing more reaches the clients: every answer has gone as far as it can, and the
    // gateway is waiting for clients that do not read.
    const ports = clients.map((client) => client.socket.localPort!);
    let previous = -1;
    let still = 0;
    for (const deadline = Date.now() + 60_000; still < 5 && Date.now() < deadline; ) {
      await sleep(100);
      peak = Math.max(peak, residentBytes(gateway.pid));
      mostHeld = Math.max(mostHeld, await readHeldAnswerBytes());
      const unread = unreadBytes(port, ports);
      still = exchanges().length === CLIENTS && unread === previous ? still + 1 : 0;
      previous = unread;
    }
  });
  return {
    clients,
    exchanges: exchanges(),
    memoryGrowth: peak - baseline,
    mostHeldAnswerBytes: mostHeld,
    slowestHealthMs: slowestMs,
    idleHealthMs: idle.slowestMs,
  };
}

/** The gateway's `hi_gateway_held_answer_bytes` now. */
async function readHeldAnswerBytes(): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  return Number(/^hi_gateway_held_answer_bytes (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

function describeFlood(result: Flood): string {
  const written = result.exchanges.reduce((sum, exchange) => sum + exchange.bytes, 0);
  return (
    `${CLIENTS} clients: upstreams wrote ${(written / 1e6).toFixed(0)} MB; gateway RSS grew ` +
    `${(result.memoryGrowth / 1e6).toFixed(1)} MB; answers held at most ${(result.mostHeldAnswerBytes / 1e6).toFixed(1)} MB; ` +
    `/healthz slowest ${result.slowestHealthMs.toFixed(0)} ms ` +
    `(idle ${result.idleHealthMs.toFixed(0)} ms)`
  );
}

/**
 * Each client is dropped once it has taken nothing for the read deadline. A client that never reads
 * cannot see its connection close, so once the deadline has passed the test reads what each got:
 * the kernel's buffers, then the end of a connection cut short.
 */
async function expectDisconnected(
  result: Flood,
  wholeAnswer: (tail: string, bytes: number) => boolean,
): Promise<void> {
  // Timers run late on a loaded machine: wait until the gateway has closed every connection
  // (seen in the kernel's table), since a client that read before that would be a reading client.
  const port = Number(new URL(gateway.url).port);
  const ports = result.clients.map((client) => client.socket.localPort!);
  await sleep(READ_TIMEOUT_SECONDS * 1000);
  let open = stillOpenOnGateway(port, ports);
  for (const deadline = Date.now() + DROP_WITHIN_MS; open > 0 && Date.now() < deadline; ) {
    await sleep(250);
    open = stillOpenOnGateway(port, ports);
  }
  assert.equal(open, 0, `${open} of ${CLIENTS} never-reading clients still connected`);
  const received = await Promise.all(
    result.clients.map(async (client) => {
      // Only the end matters (is the answer whole?): the last bytes, not 4 MB per client.
      let tail = Buffer.alloc(0);
      let bytes = 0;
      client.socket.on("data", (chunk: Buffer) => {
        bytes += chunk.byteLength;
        // The last bytes of the chunk only: copying whole chunks would be 400 MB of copies.
        tail = Buffer.concat([tail, chunk.subarray(-256)]).subarray(-256);
      });
      client.socket.resume();
      await withTimeout(client.closed, DRAIN_CLIENTS_MS, "a never-reading client's connection closed");
      return { tail: tail.toString("latin1"), bytes };
    }),
  );
  const whole = received.filter(({ tail, bytes }) => wholeAnswer(tail, bytes)).length;
  assert.equal(
    whole,
    0,
    `${whole} of ${CLIENTS} never-reading clients were kept until they got the whole answer`,
  );
}

function withTimeout<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${milliseconds} ms`)), milliseconds);
    }),
  ]).finally(() => clearTimeout(timer));
}

test("100 clients that never read a 6 MB stream: bounded memory, /healthz answers, each dropped after the read deadline", async (t) => {
  if (!existsSync("/proc/net/tcp")) return t.skip("needs Linux's /proc to read memory and socket queues");
  const result = await flood(true);
  t.diagnostic(describeFlood(result));
  assert.ok(
    result.memoryGrowth < STREAM_MEMORY_BOUND_BYTES,
    `gateway memory grew ${(result.memoryGrowth / 1e6).toFixed(1)} MB`,
  );
  assert.ok(
    result.slowestHealthMs < HEALTH_BOUND_MS + result.idleHealthMs,
    `/healthz took ${result.slowestHealthMs.toFixed(0)} ms (idle: ${result.idleHealthMs.toFixed(0)} ms)`,
  );
  await expectDisconnected(result, (tail) => tail.includes("data: [DONE]"));
});

test("100 clients that never read a 6 MB non-streamed answer: each answer held once, all of them within the held-answers budget, /healthz answers, each let go", async (t) => {
  if (!existsSync("/proc/net/tcp")) return t.skip("needs Linux's /proc to read memory and socket queues");
  const result = await flood(false);
  t.diagnostic(describeFlood(result));
  // The answers waiting for their clients stay within the instance's budget: past it, those
  // waiting longest are let go before the read deadline.
  assert.ok(result.mostHeldAnswerBytes > 0, "no answer was ever held for its client");
  assert.ok(
    result.mostHeldAnswerBytes <= HELD_ANSWERS_BYTES,
    `answers held: ${(result.mostHeldAnswerBytes / 1e6).toFixed(1)} MB, past the budget`,
  );
  // Each answer is in memory once (its bytes), not again in a queue behind the socket.
  const answerBytes = result.exchanges[0]!.bytes;
  assert.ok(
    result.memoryGrowth < CLIENTS * answerBytes * 1.5,
    `gateway memory grew ${(result.memoryGrowth / 1e6).toFixed(1)} MB for ${CLIENTS} answers of ${(answerBytes / 1e6).toFixed(1)} MB`,
  );
  assert.ok(
    result.slowestHealthMs < HEALTH_BOUND_MS + result.idleHealthMs,
    `/healthz took ${result.slowestHealthMs.toFixed(0)} ms (idle: ${result.idleHealthMs.toFixed(0)} ms)`,
  );
  await expectDisconnected(result, (_, bytes) => bytes >= nonStreamedAnswerBytes);
});
