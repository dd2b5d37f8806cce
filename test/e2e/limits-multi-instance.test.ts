/**
 * Spend limits are global: two real gateway
 * processes on one PostgreSQL and one Redis, 500 concurrent requests split between them, against
 * a key whose total limit is $0.05 while every request costs (and reserves) exactly $0.001.
 * Afterwards the Redis counters must equal the Postgres ledger, with no reservation left.
 */
import assert from "node:assert/strict";
import { after, before, describe, type TestContext, test } from "node:test";
import type { FakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { type GatewayCluster, startGatewayCluster } from "../helpers/gateway-process.js";
import {
  chatBody,
  createLimitsConfig,
  REQUEST_COST_MICRO_USD,
  readCounters,
  readLedger,
  startPricedUpstream,
  waitFor,
} from "../helpers/limits-cluster.js";
import { requireMode } from "../helpers/storage-modes.js";

const REQUESTS = 500;
const LIMIT_MICRO_USD = 50_000;

interface Outcome {
  status: number;
  code?: string;
  cost?: number;
  disconnected?: boolean;
  completed?: boolean;
}

describe("spend limits across two gateway processes", () => {
  let upstream: FakeOpenAiUpstream;
  let cluster: GatewayCluster | undefined;

  before(async () => {
    upstream = await startPricedUpstream();
  });
  after(async () => {
    await cluster?.stop();
    await upstream?.close();
  });

  async function setUp(t: TestContext) {
    if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return undefined;
    cluster ??= await startGatewayCluster({
      count: 2,
      config: createLimitsConfig(upstream.baseUrl),
      env: { FAKE_UPSTREAM_KEY: "sk-upstream" },
    });
    // One workspace per test in the cluster's one database.
    const workspace = await cluster.admin.createWorkspace({
      name: "limits",
      creditsUsd: "10",
      allowDuplicateName: true,
    });
    const { key, secret } = await cluster.admin.createKey({
      workspaceId: workspace.id,
      totalLimitUsd: "0.05",
    });
    return { cluster, workspaceId: workspace.id, keyId: key.id, secret };
  }

  /** Waits until nothing is in flight, then checks counters == ledger and no reservation is left. */
  async function assertCountersMatchLedger(context: NonNullable<Awaited<ReturnType<typeof setUp>>>) {
    let last: unknown;
    const settled = await waitFor(async () => {
      const ledger = await readLedger(context.cluster.databaseUrl, context.keyId, context.workspaceId);
      const counters = await readCounters(context.cluster.redisPrefix, context.keyId, context.workspaceId);
      last = { ledger, counters };
      return (
        ledger.inProgress === 0 &&
        counters.leases === 0 &&
        counters.totalSpendMicroUsd === ledger.keySpendMicroUsd &&
        counters.balanceMicroUsd === ledger.balanceMicroUsd
      );
    }, 10_000);
    assert.ok(settled, `counters and ledger disagree after 10 s: ${JSON.stringify(last)}`);
    const counters = await readCounters(context.cluster.redisPrefix, context.keyId, context.workspaceId);
    assert.equal(counters.reservedMicroUsd, 0, "no reservation may be left");
    return readLedger(context.cluster.databaseUrl, context.keyId, context.workspaceId);
  }

  test("500 concurrent non-streaming requests, 250 per instance: exactly 50 succeed", async (t) => {
    const context = await setUp(t);
    if (!context) return;
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, index): Promise<Outcome> => {
        const response = await fetch(`${context.cluster.gateways[index % 2].url}/api/v1/chat/completions`, {
          method: "POST",
          headers: { Authorization: `Bearer ${context.secret}`, "Content-Type": "application/json" },
          body: chatBody(),
        });
        const body = (await response.json()) as { error?: { code: string }; usage?: { cost: number } };
        return { status: response.status, code: body.error?.code, cost: body.usage?.cost };
      }),
    );
    const elapsedMs = Date.now() - started;

    const succeeded = outcomes.filter((outcome) => outcome.status === 200);
    const refused = outcomes.filter((outcome) => outcome.status === 402);
    assert.equal(succeeded.length, 50, JSON.stringify(countStatuses(outcomes)));
    assert.equal(refused.length, 450);
    assert.ok(
      refused.every((outcome) => outcome.code === "key_limit_exceeded"),
      "refusals name the key limit",
    );
    assert.ok(
      succeeded.every((outcome) => outcome.cost === 0.001),
      "each answer reports its exact cost",
    );
    assert.equal(outcomes.filter((outcome) => outcome.status >= 500).length, 0);

    const ledger = await assertCountersMatchLedger(context);
    assert.equal(ledger.keySpendMicroUsd, LIMIT_MICRO_USD);
    assert.equal(ledger.generations, 50, "one usage record per admitted request, none for refused ones");
    t.diagnostic(`L1: 50/${REQUESTS} admitted in ${elapsedMs} ms; ledger ${ledger.keySpendMicroUsd} µUSD`);

    // Spent means spent: the next request is refused on either instance, naming the limit.
    for (const gateway of context.cluster.gateways) {
      const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${context.secret}`, "Content-Type": "application/json" },
        body: chatBody(),
      });
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(response.status, 402);
      assert.match(body.error.message, /total spend limit of \$0\.05 is reached/);
    }
  });

  test("mixed: half streaming, a fifth of the clients disconnect mid-stream", async (t) => {
    const context = await setUp(t);
    if (!context) return;
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, index): Promise<Outcome> => {
        const streaming = index % 2 === 0;
        const disconnects = streaming && index % 10 < 4; // 100 of 500
        const gateway = context.cluster.gateways[Math.floor(index / 2) % 2];
        const controller = new AbortController();
        const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
          method: "POST",
          headers: { Authorization: `Bearer ${context.secret}`, "Content-Type": "application/json" },
          body: chatBody(streaming ? { stream: true } : {}),
          signal: controller.signal,
        });
        if (response.status !== 200) {
          const body = (await response.json()) as { error?: { code: string } };
          return { status: response.status, code: body.error?.code };
        }
        if (!streaming) {
          const body = (await response.json()) as { usage: { cost: number } };
          return { status: 200, cost: body.usage.cost, completed: true };
        }
        const reader = response.body!.getReader();
        let text = "";
        for (let chunk = 0; chunk < 1_000; chunk++) {
          const step = await reader.read();
          if (step.done) break;
          text += new TextDecoder().decode(step.value);
          if (disconnects && text.includes('"content":"two ')) {
            controller.abort();
            return { status: 200, disconnected: true };
          }
        }
        const usage = /"cost":([0-9.]+)/.exec(text); // only the final usage chunk carries a cost
        return {
          status: 200,
          completed: text.includes("data: [DONE]"),
          cost: usage ? Number(usage[1]) : undefined,
        };
      }),
    );
    const elapsedMs = Date.now() - started;

    const admitted = outcomes.filter((outcome) => outcome.status === 200);
    const completed = admitted.filter((outcome) => outcome.completed);
    const disconnected = admitted.filter((outcome) => outcome.disconnected);
    assert.equal(
      outcomes.filter((outcome) => outcome.status >= 500).length,
      0,
      JSON.stringify(countStatuses(outcomes)),
    );
    assert.ok(
      outcomes.every(
        (outcome) =>
          outcome.status === 200 || (outcome.status === 402 && outcome.code === "key_limit_exceeded"),
      ),
      JSON.stringify(countStatuses(outcomes)),
    );
    assert.ok(
      completed.every((outcome) => outcome.cost === 0.001),
      `complete answers cost $0.001: ${JSON.stringify(completed.map((outcome) => outcome.cost))}`,
    );
    assert.ok(completed.length <= 50, `${completed.length} full answers cannot fit in $0.05`);
    assert.ok(admitted.length >= 50, `the limit must be used up: ${admitted.length} admitted`);

    const ledger = await assertCountersMatchLedger(context);
    assert.ok(ledger.keySpendMicroUsd <= LIMIT_MICRO_USD, `settled ${ledger.keySpendMicroUsd} µUSD`);
    assert.equal(ledger.generations, admitted.length, "one usage record per admitted request");
    // A client that disconnects after the gateway wrote the whole stream (a slow client reading
    // it in one chunk under load) got a complete answer as far as the gateway knows: billed ok.
    // Every other disconnect is cancelled, and every complete answer is ok.
    assert.ok((ledger.byStatus.ok ?? 0) >= completed.length, JSON.stringify(ledger.byStatus));
    assert.ok((ledger.byStatus.cancelled ?? 0) <= disconnected.length, JSON.stringify(ledger.byStatus));
    assert.equal(
      (ledger.byStatus.ok ?? 0) + (ledger.byStatus.cancelled ?? 0),
      completed.length + disconnected.length,
      JSON.stringify(ledger.byStatus),
    );
    assert.ok(
      ledger.keySpendMicroUsd >= completed.length * REQUEST_COST_MICRO_USD,
      "complete answers are billed in full",
    );
    t.diagnostic(
      `L13: ${admitted.length}/${REQUESTS} admitted (${completed.length} complete, ${disconnected.length} ` +
        `disconnected) in ${elapsedMs} ms; ledger ${ledger.keySpendMicroUsd} µUSD of ${LIMIT_MICRO_USD}`,
    );
  });
});

function countStatuses(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const label = `${outcome.status}${outcome.code ? ` ${outcome.code}` : ""}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}
