/**
 * Usage records survive a PostgreSQL outage: the gateway reaches
 * the shared PostgreSQL through a proxy this test cuts. Requests admitted before the cut complete
 * normally; their outcomes are parked in <dataDir>/outbox; when the database returns they appear
 * exactly once and the workspace is debited exactly once — also when the gateway was restarted
 * in between (the start-up replay reads the file) and when the replay runs over duplicates.
 */
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import pg from "pg";
import type { RunningGateway } from "../../src/gateway.js";
import { PENDING_FILE_NAME } from "../../src/storage/usage-records/outcome-outbox.js";
import {
  type CuttableProxy,
  createStatePrefix,
  startCuttableProxy,
  startGatewayInstance,
  waitFor,
} from "../helpers/disposable-servers.js";
import {
  buildChatCompletion,
  buildTextChunks,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import {
  createTempDir,
  createTestDatabase,
  POSTGRES_ADMIN_URL,
  requireMode,
  TEST_REDIS_URL,
  type TestDatabase,
} from "../helpers/storage-modes.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

const STREAMS = 6;
const NON_STREAMING = 4;
/** Streams pause this long mid-way: the cut happens inside the pause. */
const STREAM_PAUSE_MS = 2_500;
const FAST_OUTBOX = { finishDeadlineMs: 1_000, retryInitialMs: 100, retryMaxMs: 400, idleCheckMs: 300 };

interface Harness {
  upstream: FakeOpenAiUpstream;
  database: TestDatabase;
  proxy: CuttableProxy;
  direct: pg.Pool;
  dataDir: { path: string; cleanup(): Promise<void> };
  releaseNonStreaming(): void;
  start(): Promise<RunningGateway>;
  close(): Promise<void>;
}

async function createHarness(): Promise<Harness> {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  // Streams: first part at once (so the client holds the request id), then a pause, then the rest.
  // Non-streaming: held until the test releases them.
  const upstream = await startFakeOpenAiUpstream({
    handler: async (request) => {
      if (request.body?.stream === true) {
        const chunks = buildTextChunks(["partial answer", " and the rest"]);
        return fakeReply.sse([...chunks.slice(0, 2), { delayMs: STREAM_PAUSE_MS }, ...chunks.slice(2)]);
      }
      await gate;
      return fakeReply.json(buildChatCompletion({ content: "done" }));
    },
  });
  const database = await createTestDatabase();
  const proxy = await startCuttableProxy(Number(new URL(POSTGRES_ADMIN_URL).port || 5432));
  const direct = new pg.Pool({ connectionString: database.url, max: 2, connectionTimeoutMillis: 5_000 });
  const dataDir = await createTempDir("gw-durability-");
  const statePrefix = createStatePrefix();
  return {
    upstream,
    database,
    proxy,
    direct,
    dataDir,
    releaseNonStreaming: () => release(),
    start: () =>
      startGatewayInstance({
        upstreamBaseUrl: upstream.baseUrl,
        databaseUrl: proxy.route(database.url),
        redisUrl: TEST_REDIS_URL,
        dataDir: dataDir.path,
        statePrefix,
        outbox: FAST_OUTBOX,
      }),
    async close() {
      release();
      await direct.end();
      await proxy.close();
      await upstream.close();
      await database.drop();
      await dataDir.cleanup();
    },
  };
}

async function countOutboxLines(directory: string): Promise<number> {
  // The replayer claims a batch by renaming pending.jsonl; a file can vanish between readdir and
  // readFile, so a vanished file restarts the count (bounded).
  for (let attempt = 0; ; attempt += 1) {
    try {
      const names = await readdir(directory).catch(() => [] as string[]);
      let lines = 0;
      for (const name of names) {
        if (!/^(pending|replaying-.+)\.jsonl$/.test(name)) continue;
        const text = await readFile(join(directory, name), "utf8");
        lines += text.split("\n").filter((line) => line.trim() !== "").length;
      }
      return lines;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

async function countRows(direct: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await direct.query<{ count: string }>(sql, params);
  return Number(rows[0].count);
}

function send(gateway: RunningGateway, apiKey: string, stream: boolean): Promise<Response> {
  return fetch(`${gateway.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }], stream }),
  });
}

/**
 * Starts the requests and resolves once all of them passed admission: the streams' records are in
 * progress (non-streamed records are written once, final) and every request reached the upstream.
 */
async function admitRequests(harness: Harness, gateway: RunningGateway, apiKey: string, workspaceId: string) {
  const responses = [
    ...Array.from({ length: STREAMS }, () => send(gateway, apiKey, true)),
    ...Array.from({ length: NON_STREAMING }, () => send(gateway, apiKey, false)),
  ];
  await waitFor(
    "all requests admitted",
    async () => {
      const admitted = await countRows(
        harness.direct,
        "SELECT count(*) FROM generations WHERE workspace_id = $1 AND status = 'in_progress'",
        [workspaceId],
      );
      return admitted === STREAMS ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
  // And every one of them is talking to the upstream.
  await harness.upstream.waitForRequests(STREAMS + NON_STREAMING);
  return responses;
}

async function readAll(
  responses: Array<Promise<Response>>,
): Promise<Array<{ status: number; text: string; id: string }>> {
  return Promise.all(
    responses.map(async (pending) => {
      const response = await pending;
      return {
        status: response.status,
        text: await response.text(),
        id: response.headers.get("x-request-id")!,
      };
    }),
  );
}

async function assertSettledExactlyOnce(
  harness: Harness,
  workspaceId: string,
  initialBalance: number,
  ids: string[],
) {
  const { rows } = await harness.direct.query<{ id: string; status: string; cost_micro_usd: string }>(
    "SELECT id, status, cost_micro_usd FROM generations WHERE id = ANY($1)",
    [ids],
  );
  assert.equal(rows.length, ids.length, "one record per request");
  for (const row of rows) assert.equal(row.status, "ok", row.id);
  const totalCost = rows.reduce((sum, row) => sum + Number(row.cost_micro_usd), 0);
  assert.ok(totalCost > 0);
  const ledger = await harness.direct.query<{ generation_id: string; n: string }>(
    "SELECT generation_id, count(*) AS n FROM ledger_entries WHERE generation_id = ANY($1) GROUP BY generation_id",
    [ids],
  );
  assert.equal(ledger.rows.length, ids.length, "every request has a ledger entry");
  for (const row of ledger.rows) assert.equal(Number(row.n), 1, `exactly one debit for ${row.generation_id}`);
  const { rows: balance } = await harness.direct.query<{ balance_micro_usd: string }>(
    "SELECT balance_micro_usd FROM workspaces WHERE id = $1",
    [workspaceId],
  );
  assert.equal(Number(balance[0].balance_micro_usd), initialBalance - totalCost, "debited exactly once");
}

async function readiness(gateway: RunningGateway): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${gateway.url}/readyz`);
  return { status: response.status, body: await response.json() };
}

test("PostgreSQL outage: admitted requests complete, outcomes are parked, replayed exactly once", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const harness = await createHarness();
  let gateway: RunningGateway | undefined;
  try {
    gateway = await harness.start();
    const initialBalance = 10_000_000;
    const workspace = await gateway.store.workspaces.create({
      name: "pg-outage",
      creditsMicroUsd: initialBalance,
      invoicing: false,
    });
    const { secret } = await gateway.store.apiKeys.create({ workspaceId: workspace.id });
    const outboxDir = join(harness.dataDir.path, "outbox");

    const responses = await admitRequests(harness, gateway, secret, workspace.id);
    const cutAt = Date.now();
    harness.proxy.cut();
    harness.releaseNonStreaming();
    const results = await readAll(responses);
    const ids = results.map((result) => result.id);
    for (const result of results) assert.equal(result.status, 200, result.text);
    for (const result of results.slice(0, STREAMS)) {
      assert.match(result.text, /"usage":\{/, "the stream still ends with its usage chunk");
      assert.match(result.text, /data: \[DONE\]\n\n$/);
    }
    assert.ok(Date.now() - cutAt < STREAM_PAUSE_MS + 5_000, "requests were not held hostage by the outage");

    const down = await waitFor(
      "readiness degraded",
      async () => {
        const ready = await readiness(gateway!);
        return ready.status === 503 ? ready : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 200 },
    );
    assert.deepEqual(down.body, { status: "degraded", checks: { redis: "ok", postgres: "down" } });
    assert.equal(await countOutboxLines(outboxDir), ids.length, "every outcome is parked on disk");
    assert.equal(
      await countRows(
        harness.direct,
        "SELECT count(*) FROM generations WHERE id = ANY($1) AND status <> 'in_progress'",
        [ids],
      ),
      0,
      "nothing final reached the database while it was cut off",
    );

    harness.proxy.restore();
    const restoredAt = Date.now();
    await waitFor(
      "parked outcomes replayed",
      async () => {
        const final = await countRows(
          harness.direct,
          "SELECT count(*) FROM generations WHERE id = ANY($1) AND status <> 'in_progress'",
          [ids],
        );
        return final === ids.length ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    t.diagnostic(
      `replayed ${ids.length} parked outcomes ${Date.now() - restoredAt} ms after PostgreSQL returned`,
    );
    await assertSettledExactlyOnce(harness, workspace.id, initialBalance, ids);
    await waitFor("outbox emptied", async () =>
      (await countOutboxLines(outboxDir)) === 0 ? true : undefined,
    );
    const ready = await waitFor(
      "readiness ok",
      async () => {
        const result = await readiness(gateway!);
        return result.status === 200 ? result : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 200 },
    );
    assert.deepEqual(ready.body, { status: "ok", checks: { redis: "ok", postgres: "ok" } });

    // F21: the same outcomes replayed again (a duplicate copy in the outbox) change nothing.
    const { rows } = await harness.direct.query("SELECT * FROM generations WHERE id = ANY($1)", [ids]);
    const duplicates = rows.map((row) =>
      JSON.stringify({
        v: 1,
        id: row.id,
        parkedAt: new Date().toISOString(),
        outcome: {
          status: "ok",
          errorCode: null,
          upstreamProvider: "fake",
          upstreamModel: "fake-upstream-model",
          tokensPrompt: 10,
          tokensCompletion: 5,
          tokensReasoning: 0,
          tokensCachedPrompt: 0,
          tokensCacheWrite: 0,
          costMicroUsd: 999_999,
          toolCostsMicroUsd: {},
          latencyMs: 1,
          finishReason: "stop",
        },
      }),
    );
    await writeFile(join(outboxDir, PENDING_FILE_NAME), `${[...duplicates, ...duplicates].join("\n")}\n`);
    const replay = await gateway.replayParkedOutcomes();
    assert.equal(replay.remaining, 0);
    assert.equal(replay.setAside, 0);
    await assertSettledExactlyOnce(harness, workspace.id, initialBalance, ids);
  } finally {
    await gateway?.close();
    await harness.close();
  }
});

test("PostgreSQL outage across a restart: the parked file is replayed at start-up", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const harness = await createHarness();
  let gateway: RunningGateway | undefined;
  try {
    gateway = await harness.start();
    const initialBalance = 5_000_000;
    const workspace = await gateway.store.workspaces.create({
      name: "restart",
      creditsMicroUsd: initialBalance,
      invoicing: false,
    });
    const { secret } = await gateway.store.apiKeys.create({ workspaceId: workspace.id });
    const outboxDir = join(harness.dataDir.path, "outbox");

    const responses = await admitRequests(harness, gateway, secret, workspace.id);
    harness.proxy.cut();
    harness.releaseNonStreaming();
    const results = await readAll(responses);
    for (const result of results) assert.equal(result.status, 200, result.text);
    const ids = results.map((result) => result.id);
    assert.equal(await countOutboxLines(outboxDir), ids.length);

    // The instance stops while PostgreSQL is still away: the outcomes stay in the file.
    await gateway.close();
    gateway = undefined;
    assert.equal(await countOutboxLines(outboxDir), ids.length, "the outbox survives the process");

    harness.proxy.restore();
    gateway = await harness.start();
    await waitFor(
      "start-up replay",
      async () => {
        const final = await countRows(
          harness.direct,
          "SELECT count(*) FROM generations WHERE id = ANY($1) AND status <> 'in_progress'",
          [ids],
        );
        return final === ids.length ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await assertSettledExactlyOnce(harness, workspace.id, initialBalance, ids);
    await waitFor("outbox emptied", async () =>
      (await countOutboxLines(outboxDir)) === 0 ? true : undefined,
    );
    // The lookup answers with the final record.
    const lookup = await fetch(`${gateway.url}/api/v1/generation?id=${ids[0]}`, {
      headers: { Authorization: `Bearer ${secret}` },
    });
    assert.equal(((await lookup.json()) as { data: { status: string } }).data.status, "ok");
  } finally {
    await gateway?.close();
    await harness.close();
  }
});
