/**
 * What a distributed gateway (PostgreSQL + Redis) waits for on a request's path, counted rather
 * than timed: both reach the gateway through proxies that hold every answer back DELAY_MS, so each
 * round trip the gateway waits for in sequence adds DELAY_MS to the request and one it only starts
 * adds nothing, whatever the machine's load. Per request, with a warm key-state cache and seeded
 * counters (a key with limits, a rate limit, a balance to check):
 * - between its arrival and the upstream call: at most one Redis round trip (reservation, rate
 *   limit and in-progress record in one script) and no PostgreSQL one;
 * - between the upstream's last byte and the client's: nothing (the record and the settlement
 *   leave afterwards, in batches);
 * and the record still ends final, billed, with its counters settled (docs/performance.md,
 * "The request path in distributed mode"). The same holds for a request that asks for the response
 * cache and misses: its lookup goes out beside the reservation, and its entry is written afterwards.
 */
import assert from "node:assert/strict";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { RunningGateway } from "../../src/gateway.js";
import { createStatePrefix, startGatewayInstance, waitFor } from "../helpers/disposable-servers.js";
import { buildChatCompletion, buildTextChunks } from "../helpers/fake-openai-upstream.js";
import { readCounters, readLedger } from "../helpers/limits-cluster.js";
import { type RoundTripProxy, startRoundTripProxy } from "../helpers/round-trip-proxy.js";
import {
  createTestDatabase,
  deleteRedisKeys,
  POSTGRES_ADMIN_URL,
  requireMode,
  TEST_REDIS_URL,
} from "../helpers/storage-modes.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

/** Far above what the gateway's own work takes on a loaded machine, so waits cannot hide. */
const DELAY_MS = Number(process.env.ROUND_TRIPS_DELAY_MS ?? 400);

interface Marks {
  /** The test wrote the request. */
  sentAt: number;
  /** The upstream read the gateway's call. */
  upstreamAt: number;
  /** The upstream wrote its last byte. */
  upstreamDoneAt: number;
  /** The test read the last byte of the answer. */
  doneAt: number;
  requestId: string;
  status: number;
  body: string;
}

/** An upstream that marks when a call arrives and when its answer's last byte left. */
async function startMarkingUpstream() {
  let marks: { upstreamAt: number; upstreamDoneAt: number } = { upstreamAt: 0, upstreamDoneAt: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      marks.upstreamAt = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean };
      const usage = { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 };
      if (body.stream === true) {
        response.writeHead(200, { "Content-Type": "text/event-stream" });
        for (const chunk of buildTextChunks(["one ", "two"], { usage })) {
          response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        response.end("data: [DONE]\n\n", () => {
          marks.upstreamDoneAt = performance.now();
        });
        return;
      }
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(buildChatCompletion({ content: "one two", usage })), () => {
        marks.upstreamDoneAt = performance.now();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    reset() {
      marks = { upstreamAt: 0, upstreamDoneAt: 0 };
      return () => marks;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `cachedAs`: the request asks for the response cache, with this prompt (a new one misses). */
function send(
  gateway: RunningGateway,
  apiKey: string,
  stream: boolean,
  cachedAs?: string,
): Promise<Omit<Marks, "upstreamAt" | "upstreamDoneAt">> {
  const payload = JSON.stringify({
    model: TEST_MODEL,
    messages: [{ role: "user", content: cachedAs ?? "hi" }],
    max_tokens: 50,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    ...(cachedAs === undefined ? {} : { hi_cache: true }),
  });
  const url = new URL(`${gateway.url}/api/v1/chat/completions`);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent: false,
        headers: {
          Authorization: `Bearer ${apiKey}`,
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(payload),
        },
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            sentAt,
            doneAt: performance.now(),
            requestId: String(response.headers["x-request-id"]),
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    const sentAt = performance.now();
    request.end(payload);
  });
}

test("distributed request path: ≤ 1 Redis round trip before the upstream, no PostgreSQL, nothing after its last byte", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startMarkingUpstream();
  const database = await createTestDatabase();
  const redisProxy = await startRoundTripProxy(Number(new URL(TEST_REDIS_URL).port || 6379));
  const postgresProxy = await startRoundTripProxy(Number(new URL(POSTGRES_ADMIN_URL).port || 5432));
  const statePrefix = createStatePrefix();
  let gateway: RunningGateway | undefined;
  try {
    const configFile = createTestConfigFile(upstream.baseUrl);
    gateway = await startGatewayInstance({
      upstreamBaseUrl: upstream.baseUrl,
      configFile,
      databaseUrl: postgresProxy.route(database.url),
      redisUrl: redisProxy.route(TEST_REDIS_URL),
      statePrefix,
      authCacheTtlMs: 30_000,
    });
    const workspace = await gateway.admin.createWorkspace({ name: "round-trips", creditsUsd: "10" });
    const { key, secret } = await gateway.admin.createKey({
      workspaceId: workspace.id,
      name: "round-trips",
      dailyLimitUsd: "5",
      monthlyLimitUsd: "8",
      totalLimitUsd: "9",
      requestsPerMinute: 1000,
    });
    // Warm: the key's state cached, the counters seeded, connections open.
    for (const stream of [false, true, false, true]) {
      const warm = await send(gateway, secret, stream);
      assert.equal(warm.status, 200, warm.body);
    }

    const ids: string[] = [];
    const breaches: string[] = [];
    for (const [stream, cached] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      for (const delayed of ["redis", "postgres"] as const) {
        const proxy: RoundTripProxy = delayed === "redis" ? redisProxy : postgresProxy;
        const readMarks = upstream.reset();
        proxy.replyDelayMs = DELAY_MS;
        let sent: Omit<Marks, "upstreamAt" | "upstreamDoneAt">;
        try {
          sent = await send(gateway, secret, stream, cached ? `miss ${ids.length}` : undefined);
        } finally {
          proxy.replyDelayMs = 0;
        }
        const marks: Marks = Object.assign({}, sent, readMarks());
        assert.equal(marks.status, 200, marks.body);
        assert.ok(marks.upstreamAt > 0 && marks.upstreamDoneAt > 0, "the upstream was called and answered");
        ids.push(marks.requestId);
        const before = marks.upstreamAt - marks.sentAt;
        const after = marks.doneAt - marks.upstreamDoneAt;
        const waitedBefore = Math.floor(before / DELAY_MS);
        const waitedAfter = Math.floor(after / DELAY_MS);
        const chunksBefore = proxy.sentBetween(marks.sentAt, marks.upstreamAt);
        const chunksAfter = proxy.sentBetween(marks.upstreamDoneAt, marks.doneAt);
        const naming = (chunks: typeof chunksBefore) =>
          chunks.filter((chunk) => chunk.bytes.includes(marks.requestId)).length;
        t.diagnostic(
          `${stream ? "streamed" : "non-streamed"}${cached ? " cached miss" : ""}, ${delayed} held ${DELAY_MS} ms: ` +
            `arrival → upstream ${before.toFixed(1)} ms (${waitedBefore} waited, ${chunksBefore.length} sent, ` +
            `${naming(chunksBefore)} naming the request); upstream's last byte → client's ${after.toFixed(1)} ms ` +
            `(${waitedAfter} waited, ${chunksAfter.length} sent)`,
        );
        if (process.env.ROUND_TRIPS_VERBOSE) {
          for (const chunk of chunksBefore)
            t.diagnostic(
              `  before +${(chunk.at - marks.sentAt).toFixed(1)}: ${chunk.bytes
                .toString("latin1")
                .replace(/[^ -~]/g, ".")
                .slice(0, 300)}`,
            );
          for (const chunk of chunksAfter)
            t.diagnostic(
              `  after: ${chunk.bytes
                .toString("latin1")
                .replace(/[^ -~]/g, ".")
                .slice(0, 300)}`,
            );
        }
        const what = `${stream ? "streamed" : "non-streamed"}${cached ? " cached-miss" : ""} request`;
        if (waitedBefore > (delayed === "redis" ? 1 : 0)) {
          breaches.push(`${what}: ${waitedBefore} ${delayed} round trips waited for before the upstream`);
        }
        if (waitedAfter > 0) {
          breaches.push(
            `${what}: ${waitedAfter} ${delayed} round trips waited for after the upstream's last byte`,
          );
        }
      }
    }
    // Every case measured before judging, so a failure shows the whole path.
    assert.deepEqual(breaches, []);

    // Nothing was lost on the way: every record final and billed once, the counters settled.
    const settled = await waitFor(
      "records final and counters settled",
      async () => {
        const ledger = await readLedger(database.url, key.id, workspace.id);
        const counters = await readCounters(statePrefix, key.id, workspace.id);
        return ledger.inProgress === 0 && ledger.generations === 12 && counters.leases === 0
          ? { ledger, counters }
          : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    // Read again now that nothing moves (readLedger's queries are not one snapshot).
    const ledger = await readLedger(database.url, key.id, workspace.id);
    assert.equal(ledger.byStatus.ok, 12);
    assert.ok(ledger.keySpendMicroUsd > 0);
    assert.equal(settled.counters.totalSpendMicroUsd, ledger.keySpendMicroUsd, "counters = ledger");
    assert.equal(settled.counters.reservedMicroUsd, 0);
  } finally {
    await gateway?.close();
    await redisProxy.close();
    await postgresProxy.close();
    await upstream.close();
    await database.drop();
    await deleteRedisKeys(statePrefix);
  }
});
