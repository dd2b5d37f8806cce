/**
 * Limits hold through a Redis that lost its memory (docs/limits.md, "When Redis loses its
 * memory"): two gateway instances on one PostgreSQL and this test's own redis-server, 50 requests
 * in flight that hold exactly a key's $0.05 total limit, then Redis killed with SIGKILL and started
 * again empty while both instances keep sending. The reservations of the requests in flight died
 * with Redis; each instance publishes its own again into the new epoch before it admits, and
 * nothing is admitted against a limit until they are back. Settled spend stays within the limit,
 * and the counters equal the ledger afterwards. Before: $0.099 settled against the $0.05 limit.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningGateway } from "../../src/gateway.js";
import {
  createStatePrefix,
  isCommandAvailable,
  sleep,
  startDisposableRedis,
  startGatewayInstance,
} from "../helpers/disposable-servers.js";
import {
  chatBody,
  createLimitsConfig,
  REQUEST_COST_MICRO_USD,
  readCounters,
  readLedger,
  startPricedUpstream,
  waitFor,
} from "../helpers/limits-cluster.js";
import { createTestDatabase, requireMode } from "../helpers/storage-modes.js";

const IN_FLIGHT = 50;
const LIMIT_MICRO_USD = 50_000;
/**
 * The upstream holds every request this long: past the kill, the restart and the recovery period
 * (5 s by default), so the re-published reservations are what refuses the load after it.
 */
const HOLD_MS = 9_000;
/** How long both instances keep sending after the kill. */
const LOAD_MS = 12_000;
const LOOPS_PER_INSTANCE = 3;

interface Answer {
  status: number;
  code?: string;
}

async function send(gateway: RunningGateway, secret: string): Promise<Answer> {
  try {
    const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: chatBody(),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await response.json()) as { error?: { code?: string } };
    return { status: response.status, code: body.error?.code };
  } catch (error) {
    return { status: 0, code: (error as Error).message };
  }
}

/** A 429 of a limit store slow to answer on a loaded machine is retried: the answer after it counts. */
async function sendPast429(gateway: RunningGateway, secret: string): Promise<Answer> {
  let answer = await send(gateway, secret);
  for (let attempt = 0; attempt < 10 && answer.status === 429; attempt++) {
    await sleep(500);
    answer = await send(gateway, secret);
  }
  return answer;
}

test("Redis killed and restarted empty under load, 50 requests in flight holding a key's whole limit: settled spend stays within it, counters equal the ledger", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  if (!isCommandAvailable("redis-server")) {
    if (process.env.CI === "true") throw new Error("redis-server is required when CI=true");
    t.skip("redis-server not installed — skipping");
    return;
  }
  const upstream = await startPricedUpstream({ delayMs: HOLD_MS });
  t.after(() => upstream.close());
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const redis = await startDisposableRedis();
  t.after(() => redis.stop());
  const prefix = createStatePrefix();
  const configFile = createLimitsConfig(upstream.baseUrl);
  for (const provider of configFile.providers)
    Object.assign(provider.timeouts, { first_byte_ms: 2 * HOLD_MS, response_ms: 2 * HOLD_MS });
  const options = {
    upstreamBaseUrl: upstream.baseUrl,
    configFile,
    databaseUrl: database.url,
    redisUrl: redis.url,
    statePrefix: prefix,
  };
  const a = await startGatewayInstance(options);
  t.after(() => a.close());
  const b = await startGatewayInstance(options);
  t.after(() => b.close());
  const instances = [a, b];

  const workspace = await a.admin.createWorkspace({ name: "memory-loss", creditsUsd: "10" });
  const { key, secret } = await a.admin.createKey({ workspaceId: workspace.id, totalLimitUsd: "0.05" });

  // 50 × $0.001 reserved: the whole limit, half on each instance.
  const inFlight = Array.from({ length: IN_FLIGHT }, (_, index) => send(instances[index % 2], secret));
  await upstream.waitForRequests(IN_FLIGHT, 20_000);
  assert.equal((await sendPast429(a, secret)).status, 402, "the limit is held by the requests in flight");

  await redis.signal("SIGKILL");
  const killedAt = Date.now();
  await redis.restart();
  t.diagnostic(`redis restarted empty ${Date.now() - killedAt} ms after the kill`);

  const load: Answer[] = [];
  const loops = instances.flatMap((gateway) =>
    Array.from({ length: LOOPS_PER_INSTANCE }, async () => {
      while (Date.now() - killedAt < LOAD_MS) {
        load.push(await send(gateway, secret));
        await sleep(50);
      }
    }),
  );
  await Promise.all(loops);
  const first = await Promise.all(inFlight);

  const tally = (answers: Answer[]) =>
    answers.reduce<Record<string, number>>((counts, answer) => {
      const name = `${answer.status}${answer.code ? ` ${answer.code}` : ""}`;
      counts[name] = (counts[name] ?? 0) + 1;
      return counts;
    }, {});
  t.diagnostic(`in flight: ${JSON.stringify(tally(first))}; load: ${JSON.stringify(tally(load))}`);
  assert.deepEqual(tally(first), { "200": IN_FLIGHT }, "the requests in flight finish normally");
  assert.ok(
    load.every((answer) => [402, 429].includes(answer.status)),
    "nothing more is admitted: 429 while Redis is down or recovering, then 402 for the limit",
  );
  assert.ok(
    load.some((answer) => answer.status === 402),
    "the limit refuses again once Redis is back",
  );

  // One more request seeds whatever counter is still missing; then counters and ledger must agree.
  assert.equal((await sendPast429(b, secret)).status, 402);
  let last: unknown;
  const agreed = await waitFor(async () => {
    const ledger = await readLedger(database.url, key.id, workspace.id);
    const counters = await readCounters(prefix, key.id, workspace.id, redis.url);
    last = { ledger, counters };
    return (
      ledger.inProgress === 0 &&
      counters.leases === 0 &&
      counters.reservedMicroUsd === 0 &&
      counters.totalSpendMicroUsd === ledger.keySpendMicroUsd &&
      counters.balanceMicroUsd === ledger.balanceMicroUsd
    );
  }, 15_000);
  assert.ok(agreed, `counters equal the ledger: ${JSON.stringify(last)}`);
  const ledger = await readLedger(database.url, key.id, workspace.id);
  assert.ok(
    ledger.keySpendMicroUsd <= LIMIT_MICRO_USD,
    `settled $${ledger.keySpendMicroUsd / 1e6} against a $0.05 limit`,
  );
  assert.equal(ledger.keySpendMicroUsd, IN_FLIGHT * REQUEST_COST_MICRO_USD, "the requests in flight, billed");
  assert.equal(ledger.balanceMicroUsd, 10_000_000 - ledger.keySpendMicroUsd);
});
