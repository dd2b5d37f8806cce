/**
 * A gateway killed with SIGKILL while streams and non-streamed requests are in flight leaves no
 * request unbilled (docs/durability.md, "Requests a crashed instance left open"): every admitted
 * request is recorded in progress before its upstream is called, and a restarted (embedded) or
 * surviving (distributed) instance settles those records as `interrupted`, billing the prompt
 * admission estimated, and releases their reservations. Real processes, a loopback upstream that
 * holds every request open, the request ids learnt from what the upstream received.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Redis } from "ioredis";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import { openStoreWithSqlClient } from "../../src/storage/open-store.js";
import {
  buildChunk,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import {
  type GatewayProcess,
  prepareEmbeddedGateway,
  startGatewayCluster,
  startGatewayProcess,
} from "../helpers/gateway-process.js";
import { readCounters, readLedger, waitFor } from "../helpers/limits-cluster.js";
import { requireMode, TEST_REDIS_URL } from "../helpers/storage-modes.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

const STREAMS = 3;
const NON_STREAMED = 3;
/** A prompt long enough that its estimate costs whole micro-dollars at the test's $2/M. */
const PROMPT = "The quick brown fox jumps over the lazy dog. ".repeat(200);

interface GenerationView {
  status: string;
  error_code: string | null;
  usage_estimated: boolean;
  tokens_prompt: number;
  tokens_completion: number;
  cost_micro_usd: string;
}

/** Streams get one chunk of content and then nothing; non-streamed requests get no answer at all. */
async function startHoldingUpstream(): Promise<FakeOpenAiUpstream> {
  return startFakeOpenAiUpstream({
    handler: (request) =>
      request.body?.stream === true
        ? fakeReply.sse([
            buildChunk({ role: "assistant", content: "" }),
            buildChunk({ content: "Once upon a time" }),
            { hang: true },
          ])
        : fakeReply.hang(),
  });
}

interface InFlight {
  /** The gateway's request ids, as the upstream received them. */
  ids: string[];
  /**
   * What each client got in the end: the HTTP status and body (a stream's body after its first
   * content). Never settles for a gateway that was killed.
   */
  answers: Promise<Array<{ status: number; body: string }>>;
}

/** Sends the requests; resolves once every stream has delivered content and the upstream holds all. */
async function sendInFlight(
  gatewayUrl: string,
  apiKey: string,
  upstream: FakeOpenAiUpstream,
  signal?: AbortSignal,
): Promise<InFlight> {
  const before = upstream.requests.length;
  const send = (stream: boolean) =>
    fetch(`${gatewayUrl}/api/v1/chat/completions`, {
      signal,
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: TEST_MODEL,
        messages: [{ role: "user", content: PROMPT }],
        max_tokens: 500,
        stream,
      }),
    });
  const streams = Array.from({ length: STREAMS }, async () => {
    const response = await send(true);
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    let received = "";
    while (!received.includes("Once upon a time")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before its content");
      received += new TextDecoder().decode(value);
    }
    return { reader, status: response.status };
  });
  const nonStreamed = Array.from({ length: NON_STREAMED }, async () => {
    const response = await send(false);
    return { status: response.status, body: await response.text() };
  });
  const started = await Promise.all(streams);
  await upstream.waitForRequests(before + STREAMS + NON_STREAMED, 20_000);
  const rest = started.map(async ({ reader, status }) => {
    let body = "";
    for (let step = await reader.read(); !step.done; step = await reader.read()) {
      body += new TextDecoder().decode(step.value);
    }
    return { status, body };
  });
  const answers = Promise.all([...rest, ...nonStreamed]);
  answers.catch(() => {}); // A killed gateway's clients fail; nobody awaits those.
  return {
    ids: upstream.requests.slice(before).map((request) => String(request.headers["x-gateway-request-id"])),
    answers,
  };
}

async function readGeneration(gatewayUrl: string, apiKey: string, id: string): Promise<GenerationView> {
  const response = await fetch(`${gatewayUrl}/api/v1/generation?id=${id}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const body = (await response.json()) as { data?: GenerationView };
  assert.equal(response.status, 200, `${id}: ${JSON.stringify(body)}`);
  return body.data!;
}

/** Every record interrupted, its prompt billed and marked estimated; returns the sum of costs. */
function assertInterrupted(records: GenerationView[]): number {
  let total = 0;
  for (const record of records) {
    assert.equal(record.status, "interrupted");
    assert.equal(record.usage_estimated, true);
    assert.ok(record.tokens_prompt >= 2_000, `the prompt's estimate: ${record.tokens_prompt}`);
    assert.equal(record.tokens_completion, 0);
    assert.ok(Number(record.cost_micro_usd) > 0);
    total += Number(record.cost_micro_usd);
  }
  return total;
}

test("embedded: a gateway killed mid-stream and mid-request has every request settled as interrupted at its next start, debited once, nothing reserved", async (t) => {
  const upstream = await startHoldingUpstream();
  t.after(() => upstream.close());
  const setup = await prepareEmbeddedGateway(createTestConfigFile(upstream.baseUrl), {
    FAKE_UPSTREAM_KEY: "sk-upstream",
    GATEWAY_PGLITE_THREAD: "main",
  });
  t.after(() => setup.cleanup());
  const { env, dataDir, secret } = setup;

  const first = await startGatewayProcess({ env });
  t.after(() => first.stop(0));
  const admin = createHttpAdminClient(first.url, secret);
  const workspace = await admin.createWorkspace({ name: "crash", creditsUsd: "1" });
  const { secret: apiKey } = await admin.createKey({ workspaceId: workspace.id });
  const { ids } = await sendInFlight(first.url, apiKey, upstream);
  process.kill(first.pid, "SIGKILL");
  assert.match(await first.stop(0), /signal=SIGKILL/);

  const second = await startGatewayProcess({ env });
  let total: number;
  try {
    const records = await Promise.all(ids.map((id) => readGeneration(second.url, apiKey, id)));
    total = assertInterrupted(records);
    const key = await fetch(`${second.url}/api/v1/key`, { headers: { authorization: `Bearer ${apiKey}` } });
    const info = (await key.json()) as { data: { workspace: { reserved_micro_usd: string | null } } };
    assert.equal(info.data.workspace.reserved_micro_usd, "0", "nothing reserved");
  } finally {
    await second.stop();
  }

  const { store, client } = await openStoreWithSqlClient({ dataDir });
  try {
    assert.equal((await store.workspaces.get(workspace.id))?.balanceMicroUsd, 1_000_000 - total);
    const [ledger] = await client.query<{ lines: string; spent: string }>(
      `SELECT count(*) AS lines, COALESCE(-SUM(amount_micro_usd), 0) AS spent
       FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'`,
      [workspace.id],
    );
    assert.equal(Number(ledger.lines), ids.length, "one ledger line per request");
    assert.equal(Number(ledger.spent), total, "the ledger equals the records");
    const [open] = await client.query<{ count: string }>(
      "SELECT count(*) FROM generations WHERE status = 'in_progress'",
    );
    assert.equal(Number(open.count), 0);
  } finally {
    await store.close();
  }
});

test("distributed: one of two gateways killed mid-stream and mid-request; the survivor settles every request as interrupted, the ledger equals the balance and the counters, no reservation left", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startHoldingUpstream();
  t.after(() => upstream.close());
  // Requests end by 2 s, so a record in progress 4 s after admission is an orphan. Reservations
  // outlive the test: whatever releases them is the sweep, not their expiry.
  const cluster = await startGatewayCluster({
    count: 2,
    config: createTestConfigFile(upstream.baseUrl, {
      limits: { max_request_seconds: 2, reservation_ttl_seconds: 600 },
    }),
    env: { FAKE_UPSTREAM_KEY: "sk-upstream" },
  });
  t.after(() => cluster.stop());
  const [victim, survivor] = cluster.gateways as [GatewayProcess, GatewayProcess];
  const workspace = await cluster.admin.createWorkspace({ name: "crash", creditsUsd: "1" });
  const { key, secret: apiKey } = await cluster.admin.createKey({
    workspaceId: workspace.id,
    totalLimitUsd: "0.9",
  });

  // A record this database refuses (another deployment's on the same Redis), older than all: the
  // sweep skips it rather than stopping there.
  const foreign = await plantForeignRecord(cluster.redisPrefix);
  t.after(() => foreign.remove());

  // The survivor's own requests, held upstream too, end at the deadline (504 provider_timeout, the
  // stream with its error event), so no sweep ever settles a request that is still running.
  const own = await sendInFlight(survivor.url, apiKey, upstream);
  const { ids } = await sendInFlight(victim.url, apiKey, upstream);
  process.kill(victim.pid, "SIGKILL");
  assert.match(await victim.stop(0), /signal=SIGKILL/);

  const settled = await waitFor(async () => {
    const records = await Promise.all(ids.map((id) => readGeneration(survivor.url, apiKey, id)));
    return records.every((record) => record.status !== "in_progress");
  }, 20_000);
  assert.ok(settled, "the survivor settled every record");
  const records = await Promise.all(ids.map((id) => readGeneration(survivor.url, apiKey, id)));
  let total = assertInterrupted(records);
  for (const answer of await own.answers) {
    if (answer.status === 200)
      assert.match(answer.body, /"code":"provider_timeout"/, "the stream's error event");
    else assert.equal(answer.status, 504, answer.body);
  }
  for (const id of own.ids) {
    const record = await readGeneration(survivor.url, apiKey, id);
    assert.equal(record.status, "error", "ended by its deadline, not swept");
    assert.equal(record.error_code, "provider_timeout");
    total += Number(record.cost_micro_usd);
  }

  const ledger = await readLedger(cluster.databaseUrl, key.id, workspace.id);
  assert.deepEqual(ledger.byStatus, { interrupted: ids.length, error: own.ids.length });
  assert.equal(ledger.keySpendMicroUsd, total, "the ledger equals the records");
  assert.equal(ledger.balanceMicroUsd, 1_000_000 - total, "the balance equals the ledger");
  const counters = await readCounters(cluster.redisPrefix, key.id, workspace.id);
  assert.equal(counters.leases, 0, "no lease left");
  assert.equal(counters.reservedMicroUsd, 0, "nothing reserved");
  assert.equal(counters.totalSpendMicroUsd, total, "the key's spend counter equals the ledger");
  assert.equal(counters.balanceMicroUsd, 1_000_000 - total, "the balance counter equals the ledger");
});

test("distributed, default max_request_seconds: one of two gateways killed mid-stream and mid-request; once its lease expires the survivor settles every request as interrupted, and none of its own", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startHoldingUpstream();
  t.after(() => upstream.close());
  // Requests may run an hour (the default): only the lease, 5 s here (60 s by default), tells a dead
  // instance. Reservations outlive the test: whatever releases them is the sweep.
  const leaseSeconds = 5;
  const config = createTestConfigFile(upstream.baseUrl, {
    limits: { instance_lease_seconds: leaseSeconds, reservation_ttl_seconds: 600 },
  });
  // The held requests wait for no upstream deadline either: only their clients end them.
  for (const provider of config.providers)
    Object.assign(provider.timeouts, { first_byte_ms: 120_000, response_ms: 120_000, idle_ms: 120_000 });
  const cluster = await startGatewayCluster({
    count: 2,
    config,
    env: { FAKE_UPSTREAM_KEY: "sk-upstream" },
  });
  t.after(() => cluster.stop());
  const [victim, survivor] = cluster.gateways as [GatewayProcess, GatewayProcess];
  const workspace = await cluster.admin.createWorkspace({ name: "lease", creditsUsd: "1" });
  const { key, secret: apiKey } = await cluster.admin.createKey({
    workspaceId: workspace.id,
    totalLimitUsd: "0.9",
  });

  // The survivor's own requests, held upstream as long as the victim's: alive, never swept.
  const ownClients = new AbortController();
  const own = await sendInFlight(survivor.url, apiKey, upstream, ownClients.signal);
  const { ids } = await sendInFlight(victim.url, apiKey, upstream);
  process.kill(victim.pid, "SIGKILL");
  const killedAt = Date.now();
  assert.match(await victim.stop(0), /signal=SIGKILL/);

  const settled = await waitFor(async () => {
    const records = await Promise.all(ids.map((id) => readGeneration(survivor.url, apiKey, id)));
    return records.every((record) => record.status !== "in_progress");
  }, 30_000);
  const tookMs = Date.now() - killedAt;
  t.diagnostic(`the survivor settled the victim's requests ${tookMs} ms after the kill`);
  assert.ok(settled, "the survivor settled every record of the dead instance");
  const records = await Promise.all(ids.map((id) => readGeneration(survivor.url, apiKey, id)));
  let total = assertInterrupted(records);
  for (const id of own.ids) {
    const record = await readGeneration(survivor.url, apiKey, id);
    assert.equal(record.status, "in_progress", "a live instance's request is left alone");
  }

  // The survivor's clients leave: their requests end as cancelled, settled by the survivor itself.
  ownClients.abort();
  const ended = await waitFor(async () => {
    const own_ = await Promise.all(own.ids.map((id) => readGeneration(survivor.url, apiKey, id)));
    return own_.every((record) => record.status === "cancelled");
  }, 20_000);
  assert.ok(ended, "the survivor's own requests end as cancelled");
  for (const id of own.ids) total += Number((await readGeneration(survivor.url, apiKey, id)).cost_micro_usd);

  const ledger = await readLedger(cluster.databaseUrl, key.id, workspace.id);
  assert.deepEqual(ledger.byStatus, { interrupted: ids.length, cancelled: own.ids.length });
  assert.equal(ledger.keySpendMicroUsd, total, "the ledger equals the records");
  assert.equal(ledger.balanceMicroUsd, 1_000_000 - total, "the balance equals the ledger");
  const counters = await waitForCounters(cluster.redisPrefix, key.id, workspace.id);
  assert.equal(counters.leases, 0, "no lease left");
  assert.equal(counters.reservedMicroUsd, 0, "nothing reserved");
  assert.equal(counters.totalSpendMicroUsd, total, "the key's spend counter equals the ledger");
  assert.equal(counters.balanceMicroUsd, 1_000_000 - total, "the balance counter equals the ledger");
});

/** The counters once every settlement reached them (a cancelled request settles after its record). */
async function waitForCounters(prefix: string, keyId: string, workspaceId: string) {
  let counters = await readCounters(prefix, keyId, workspaceId);
  await waitFor(async () => {
    counters = await readCounters(prefix, keyId, workspaceId);
    return counters.leases === 0;
  }, 10_000);
  return counters;
}

/**
 * Lists an in-progress record of a workspace that does not exist here in the cluster's index
 * (under its Redis prefix), admitted a minute ago: finishing it breaks a foreign key.
 */
async function plantForeignRecord(prefix: string): Promise<{ remove(): Promise<void> }> {
  const id = `req_foreign_${randomBytes(6).toString("hex")}`;
  const key = `gen-in-progress:${id}`;
  const admittedAt = new Date(Date.now() - 60_000);
  const start = {
    id,
    workspaceId: `ws_elsewhere_${randomBytes(4).toString("hex")}`,
    apiKeyId: "key_elsewhere",
    model: TEST_MODEL,
    ingressFormat: "chat_completions",
    source: "api",
    stream: false,
    createdAt: admittedAt.toISOString(),
    estimatedInputTokens: 10,
  };
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, keyPrefix: prefix });
  try {
    await redis
      .multi()
      .set(key, JSON.stringify({ start, at: admittedAt.toISOString() }), "PX", 600_000)
      .zadd("gen-in-progress", admittedAt.getTime(), key)
      .exec();
  } finally {
    redis.disconnect();
  }
  return {
    async remove() {
      const cleanup = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, keyPrefix: prefix });
      try {
        await cleanup.multi().del(key).zrem("gen-in-progress", key).exec();
      } finally {
        cleanup.disconnect();
      }
    },
  };
}
