/**
 * Dependencies down at start and later, in distributed mode, against servers this test owns and
 * breaks: a throwaway PostgreSQL cluster (initdb/pg_ctl on a spare port, frozen with SIGSTOP and
 * stopped by its own PIDs) and a throwaway redis-server. The machine's shared servers are never
 * touched.
 *
 * - PostgreSQL frozen: requests that need it get 429 rate_limit_exceeded with Retry-After within
 *   the database deadline, then at once, never a slow 500; readiness says postgres is down and
 *   follows it back within a second or two of the thaw, with no restart; answers given meanwhile
 *   are recorded once it is back.
 * - A gateway started while PostgreSQL or Redis is unreachable starts, is unready naming what is
 *   down, answers the documented error, and serves by itself once the dependency is up (migrations
 *   run then; subscriptions made during the outage work).
 * - Redis restarted with empty memory grants no fresh budget: counters are re-seeded from the
 *   ledger before a limit is enforced again.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { RunningGateway } from "../../src/gateway.js";
import { type DisposablePostgres, startDisposablePostgresOrSkip } from "../helpers/disposable-postgres.js";
import {
  createStatePrefix,
  type DisposableRedis,
  isCommandAvailable,
  sleep,
  startDisposableRedis,
  startGatewayInstance,
  waitFor,
} from "../helpers/disposable-servers.js";
import { type FakeOpenAiUpstream, startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTestDatabase, requireMode } from "../helpers/storage-modes.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

const FAST_OUTBOX = { finishDeadlineMs: 1_000, retryInitialMs: 100, retryMaxMs: 400, idleCheckMs: 300 };
const SECRET = `outage-${Date.now()}`;

/** Cleanup steps of one test, run last-registered first (node:test runs its own hooks in order). */
function createCleanup(t: TestContext): (step: () => unknown) => void {
  const steps: Array<() => unknown> = [];
  t.after(async () => {
    for (const step of steps.reverse()) await step();
  });
  return (step) => {
    steps.push(step);
  };
}

type Defer = ReturnType<typeof createCleanup>;

async function startPostgres(t: TestContext, defer: Defer) {
  const postgres = await startDisposablePostgresOrSkip(t);
  if (postgres) defer(() => postgres.destroy());
  return postgres;
}

async function startRedisOrSkip(t: TestContext, defer: Defer): Promise<DisposableRedis | undefined> {
  if (!isCommandAvailable("redis-server")) {
    if (process.env.CI === "true") throw new Error("redis-server is required when CI=true");
    t.skip("redis-server not installed — skipping");
    return undefined;
  }
  const redis = await startDisposableRedis();
  defer(() => redis.stop());
  return redis;
}

async function startUpstream(defer: Defer): Promise<FakeOpenAiUpstream> {
  const upstream = await startFakeOpenAiUpstream();
  defer(() => upstream.close());
  return upstream;
}

async function startGateway(
  defer: Defer,
  options: Parameters<typeof startGatewayInstance>[0],
): Promise<RunningGateway> {
  const gateway = await startGatewayInstance({
    internalSharedSecret: SECRET,
    outbox: FAST_OUTBOX,
    ...options,
  });
  defer(() => gateway.close());
  return gateway;
}

interface Servers {
  defer: Defer;
  redis: DisposableRedis;
  /** The throwaway cluster (when asked for), else undefined: a fresh database on the shared server. */
  postgres?: DisposablePostgres;
  databaseUrl: string;
  /** What every gateway of the test is started with; add the test's own options. */
  gatewayOptions: Parameters<typeof startGatewayInstance>[0];
}

/**
 * The test's own Redis, a fake upstream, and either a throwaway PostgreSQL cluster (to break it)
 * or a fresh database on the shared server (when PostgreSQL is not what fails); undefined when the
 * test was skipped for a missing server.
 */
async function startServers(
  t: TestContext,
  postgresKind: "throwaway" | "shared",
): Promise<Servers | undefined> {
  const defer = createCleanup(t);
  let postgres: DisposablePostgres | undefined;
  let databaseUrl: string;
  if (postgresKind === "throwaway") {
    postgres = await startPostgres(t, defer);
    if (!postgres) return undefined;
    databaseUrl = postgres.url;
  } else {
    if (!(await requireMode(t, "postgres"))) return undefined;
    const database = await createTestDatabase();
    defer(() => database.drop());
    databaseUrl = database.url;
  }
  const redis = await startRedisOrSkip(t, defer);
  if (!redis) return undefined;
  const upstream = await startUpstream(defer);
  return {
    defer,
    redis,
    postgres,
    databaseUrl,
    gatewayOptions: {
      upstreamBaseUrl: upstream.baseUrl,
      databaseUrl,
      redisUrl: redis.url,
      statePrefix: createStatePrefix(),
    },
  };
}

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  code?: string;
  requestId: string | null;
}

async function send(
  gateway: RunningGateway,
  apiKey: string,
  path = "/api/v1/chat/completions",
): Promise<Answer> {
  const startedAt = performance.now();
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 50,
    }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await response.json()) as { error?: { code?: string } };
  return {
    status: response.status,
    ms: performance.now() - startedAt,
    retryAfter: response.headers.get("retry-after"),
    code: body.error?.code,
    requestId: response.headers.get("x-request-id"),
  };
}

async function readiness(gateway: RunningGateway) {
  const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
}

function assertOutageAnswer(answer: Answer, what: string): void {
  assert.equal(answer.status, 429, `${what}: ${JSON.stringify(answer)}`);
  assert.equal(answer.code, "rate_limit_exceeded", what);
  assert.equal(answer.retryAfter, "5", what);
}

test("PostgreSQL frozen (SIGSTOP): 429 with Retry-After within the deadline, then at once; readiness follows it down and back; answers given meanwhile are recorded", async (t) => {
  const servers = await startServers(t, "throwaway");
  if (!servers?.postgres) return;
  const { defer, postgres } = servers;
  const gateway = await startGateway(defer, {
    ...servers.gatewayOptions,
    // Keys never used before always need the database; a key used just before the freeze is
    // still cached for a few seconds.
    authCacheTtlMs: 3_000,
  });
  const workspace = await gateway.store.workspaces.create({
    name: "frozen",
    creditsMicroUsd: 10_000_000,
    invoicing: false,
  });
  const keys = await Promise.all(
    Array.from({ length: 40 }, (_, index) =>
      gateway.store.apiKeys.create({ workspaceId: workspace.id, name: `k${index}` }),
    ),
  );
  const cached = keys[0].secret;
  assert.equal((await send(gateway, cached)).status, 200);

  postgres.freeze();
  const frozenAt = performance.now();
  defer(() => postgres.thaw());
  // Answered from the caches: the upstream is called and the outcome parked for later.
  const cachedAnswer = send(gateway, cached);

  // Readiness, polled from the moment of the freeze.
  let unready: number | undefined;
  const polling = (async () => {
    while (unready === undefined && performance.now() - frozenAt < 6_000) {
      const ready = await readiness(gateway);
      if (ready.status === 503) {
        assert.equal(ready.body.checks.postgres, "down");
        assert.equal(ready.body.checks.redis, "ok");
        unready = performance.now() - frozenAt;
      }
      await sleep(100);
    }
  })();
  const answers: Answer[] = [];
  let next = 1;
  while (performance.now() - frozenAt < 6_000) {
    answers.push(await send(gateway, keys[next++ % keys.length].secret));
    await sleep(150);
  }
  await polling;
  const messages = await send(gateway, keys[next++ % keys.length].secret, "/api/v1/messages");

  const duringFreeze = await cachedAnswer;
  assert.equal(duringFreeze.status, 200, JSON.stringify(duringFreeze));
  assert.ok(duringFreeze.ms < 2_000 + 1_500, `the cached request took ${duringFreeze.ms.toFixed(0)} ms`);
  t.diagnostic(
    `answers while frozen: ${answers.map((answer) => `${answer.status}/${answer.ms.toFixed(0)}ms`).join(" ")}`,
  );
  for (const answer of answers) assertOutageAnswer(answer, "a request that needs the frozen database");
  assertOutageAnswer(messages, "the messages format");
  const slowest = Math.max(...answers.map((answer) => answer.ms));
  assert.ok(slowest < 2_000 + 1_500, `the slowest answer took ${slowest.toFixed(0)} ms`);
  const later = answers.slice(answers.length - 5).map((answer) => answer.ms);
  assert.ok(Math.max(...later) < 500, `once known down, answers come at once: ${later.join(", ")}`);
  assert.ok(unready !== undefined && unready < 2_500, `readiness turned 503 after ${unready} ms`);

  postgres.thaw();
  const thawedAt = performance.now();
  await waitFor(
    "readiness back",
    async () => ((await readiness(gateway)).status === 200 ? true : undefined),
    {
      timeoutMs: 5_000,
      intervalMs: 50,
    },
  );
  const readyAfter = performance.now() - thawedAt;
  await waitFor(
    "requests served again",
    async () => ((await send(gateway, keys[next++ % keys.length].secret)).status === 200 ? true : undefined),
    { timeoutMs: 5_000, intervalMs: 50 },
  );
  const servedAfter = performance.now() - thawedAt;
  t.diagnostic(`ready ${readyAfter.toFixed(0)} ms and serving ${servedAfter.toFixed(0)} ms after the thaw`);
  assert.ok(readyAfter < 2_500, `readiness came back ${readyAfter.toFixed(0)} ms after the thaw`);
  assert.ok(servedAfter < 2_500, `requests were served again ${servedAfter.toFixed(0)} ms after the thaw`);

  const record = await waitFor(
    "the answer given during the freeze is recorded",
    async () => {
      const found = await gateway.store.generations.get(duringFreeze.requestId!, workspace.id);
      return found?.status === "ok" ? found : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  assert.ok((record.costMicroUsd ?? 0) > 0);
});

test("started while PostgreSQL is down: unready naming it, 429 at once, then migrated and serving by itself once it is up", async (t) => {
  const servers = await startServers(t, "throwaway");
  if (!servers?.postgres) return;
  const { defer, postgres } = servers;
  postgres.kill();
  const gateway = await startGateway(defer, servers.gatewayOptions);
  const down = await readiness(gateway);
  assert.equal(down.status, 503);
  assert.deepEqual(down.body, { status: "degraded", checks: { redis: "ok", postgres: "down" } });
  const refused = await send(gateway, `hi-${"x".repeat(40)}`);
  assertOutageAnswer(refused, "a key that cannot be looked up");
  assert.ok(refused.ms < 500, `answered after ${refused.ms.toFixed(0)} ms`);

  await postgres.start();
  const startedAt = performance.now();
  await waitFor(
    "ready without a restart",
    async () => ((await readiness(gateway)).status === 200 ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 100,
    },
  );
  t.diagnostic(`ready ${(performance.now() - startedAt).toFixed(0)} ms after PostgreSQL started`);
  const workspace = await gateway.store.workspaces.create({
    name: "late",
    creditsMicroUsd: 1_000_000,
    invoicing: false,
  });
  const key = await gateway.store.apiKeys.create({ workspaceId: workspace.id, name: "late" });
  const served = await send(gateway, key.secret);
  assert.equal(served.status, 200, JSON.stringify(served));
});

test("started while Redis is down: unready naming it, 429 for limited requests, then serving, with its subscriptions working, once Redis is up", async (t) => {
  const servers = await startServers(t, "shared");
  if (!servers) return;
  const { defer, redis } = servers;
  await redis.stop();
  const options = {
    ...servers.gatewayOptions,
    // Longer than the test: a refusal on B can only come from the pub/sub announcement.
    authCacheTtlMs: 30_000,
  };
  const a = await startGateway(defer, options);
  const b = await startGateway(defer, options);
  for (const gateway of [a, b]) {
    const down = await readiness(gateway);
    assert.equal(down.status, 503);
    assert.deepEqual(down.body, { status: "degraded", checks: { redis: "down", postgres: "ok" } });
  }
  const workspace = await a.store.workspaces.create({
    name: "no-redis",
    creditsMicroUsd: 1_000_000,
    invoicing: false,
  });
  const key = await a.store.apiKeys.create({ workspaceId: workspace.id, name: "k" });
  const refused = await send(b, key.secret);
  assertOutageAnswer(refused, "a request whose balance cannot be checked");
  assert.ok(refused.ms < 2_000, `answered after ${refused.ms.toFixed(0)} ms`);

  await redis.restart();
  for (const gateway of [a, b]) {
    await waitFor("ready", async () => ((await readiness(gateway)).status === 200 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
  }
  await waitFor("served", async () => ((await send(b, key.secret)).status === 200 ? true : undefined), {
    timeoutMs: 5_000,
    intervalMs: 100,
  });
  // B's subscriptions were made while Redis was unreachable: a change made on A reaches it.
  await a.admin.setKeyStatus(key.key.id, "disabled");
  const changedAt = performance.now();
  await waitFor(
    "B refuses the disabled key",
    async () => ((await send(b, key.secret)).status === 401 ? true : undefined),
    {
      timeoutMs: 5_000,
      intervalMs: 50,
    },
  );
  assert.ok(performance.now() - changedAt < 3_000);
});

test("Redis restarted with empty memory grants no fresh budget: the counters are re-seeded from the ledger first", async (t) => {
  const servers = await startServers(t, "shared");
  if (!servers) return;
  const { defer, redis } = servers;
  const gateway = await startGateway(defer, servers.gatewayOptions);
  const workspace = await gateway.admin.createWorkspace({ name: "budget", creditsUsd: "10" });
  // Each request reserves about $0.00042 (its input and 50 output tokens) and costs $0.00006.
  const { secret, key } = await gateway.admin.createKey({
    workspaceId: workspace.id,
    totalLimitUsd: "0.0006",
  });

  let admitted = 0;
  for (;;) {
    const answer = await send(gateway, secret);
    if (answer.status !== 200) {
      assert.equal(answer.status, 402, JSON.stringify(answer));
      assert.equal(answer.code, "key_limit_exceeded");
      break;
    }
    admitted++;
    assert.ok(admitted < 20, "the limit stops admissions");
  }
  assert.ok(admitted >= 2, `admitted ${admitted}`);

  await redis.signal("SIGKILL");
  await redis.restart();
  const afterRestart = await waitFor(
    "the limit store answers again",
    async () => {
      const answer = await send(gateway, secret);
      return answer.code === "rate_limit_exceeded" ? undefined : answer;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  assert.equal(afterRestart.status, 402, `after Redis lost its counters: ${JSON.stringify(afterRestart)}`);
  assert.equal(afterRestart.code, "key_limit_exceeded");

  const spent = await gateway.spendGuard.readReserved(workspace.id, key.id);
  assert.deepEqual(spent, { keyMicroUsd: 0, workspaceMicroUsd: 0 }, "nothing held in flight");
  // The refusal is the ledger's doing, not a broken store: with room again, requests are admitted.
  await gateway.admin.updateKey(key.id, { totalLimitUsd: "1" });
  assert.equal((await send(gateway, secret)).status, 200);
});
