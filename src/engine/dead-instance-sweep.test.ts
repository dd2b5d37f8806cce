// The sweep of dead instances over real shared state (in-process; the Redis twin is held to the
// same contract in storage/shared-state): an instance whose lease lapsed has its records settled
// as interrupted and is unlisted; a live one is left alone; and an observer that has just come
// into contact with the store takes nobody for dead until a whole lease time of contact passed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestStart } from "../../test/helpers/generation-records.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { OrphanSettlement, SpendGuard } from "../limits/spend-guard.js";
import { createLogger } from "../logging/logger.js";
import { createInProcessSharedState } from "../storage/shared-state/in-process-shared-state.js";
import { createInstanceLeases } from "../storage/shared-state/instance-leases.js";
import { startDeadInstanceSweep } from "./dead-instance-sweep.js";
import type { GenerationOutcome, GenerationStart } from "./generation-record.js";
import type { EngineStore } from "./ports.js";

const LEASE_MS = 1_000;

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Records in progress per instance; `finish` takes one out and remembers its outcome. */
function createRecords(starts: GenerationStart[]) {
  const open = new Map(starts.map((start) => [start.id, start]));
  const finished = new Map<string, GenerationOutcome>();
  const store = {
    generations: {
      async listInProgressOf(instanceId: string, limit: number) {
        return [...open.values()].filter((start) => start.instanceId === instanceId).slice(0, limit);
      },
      async finish(id: string, outcome: GenerationOutcome) {
        open.delete(id);
        finished.set(id, outcome);
      },
    },
  } as unknown as EngineStore;
  return { store, open, finished };
}

function startSweep(store: EngineStore, state: ReturnType<typeof createInProcessSharedState>) {
  const orphans: OrphanSettlement[] = [];
  const spendGuard = {
    async settleOrphan(input: OrphanSettlement) {
      orphans.push(input);
    },
  } as unknown as SpendGuard;
  const sweep = startDeadInstanceSweep({
    instanceId: "inst_observer",
    leases: createInstanceLeases(state),
    config: { instanceLeaseMs: LEASE_MS, modelsBySlug: new Map() } as unknown as GatewayConfig,
    store,
    spendGuard,
    logger: createLogger("silent"),
  });
  return { sweep, orphans };
}

const identity = (id: string) => ({ id, workspaceId: "ws_1", apiKeyId: "key_1" });

test("an instance whose lease lapsed has its records settled as interrupted and is unlisted; a live one is left alone", async () => {
  const state = createInProcessSharedState();
  const leases = createInstanceLeases(state);
  const { store, open, finished } = createRecords([
    createTestStart(identity("req_dead"), { instanceId: "inst_dead", estimatedInputTokens: 9 }),
    createTestStart(identity("req_live"), { instanceId: "inst_live" }),
  ]);
  await leases.renew("inst_dead");
  await leases.renew("inst_live");
  const { sweep, orphans } = startSweep(store, state);
  try {
    // Both are silent no longer than a lease: nothing happens.
    assert.equal(await sweep.runNow(), 0);
    assert.equal(finished.size, 0);
    // The live one renews; the dead one does not.
    for (let elapsed = 0; elapsed < LEASE_MS * 2; elapsed += 100) {
      await leases.renew("inst_live");
      await sleep(100);
    }
    await sweep.runNow(); // Or the sweep's own timer got there first.
    assert.equal(finished.get("req_dead")?.status, "interrupted");
    assert.equal(finished.get("req_dead")?.tokensPrompt, 9, "the prompt admission estimated");
    assert.deepEqual(
      orphans.map((orphan) => orphan.requestId),
      ["req_dead"],
      "its reservation settled",
    );
    assert.ok(open.has("req_live"), "a live instance's record is left alone");
    const listed = (await leases.list()).map((entry) => entry.instanceId).sort();
    assert.deepEqual(listed, ["inst_live", "inst_observer"], "the dead instance is unlisted");
  } finally {
    await sweep.stop();
    await state.close();
  }
});

test("an observer that has just come into contact takes nobody for dead before a whole lease time of contact", async () => {
  const state = createInProcessSharedState();
  const leases = createInstanceLeases(state);
  const { store, finished } = createRecords([
    createTestStart(identity("req_quiet"), { instanceId: "inst_quiet" }),
  ]);
  await leases.renew("inst_quiet");
  await sleep(LEASE_MS + 100); // Silent for longer than a lease before the observer starts.
  const { sweep } = startSweep(store, state);
  try {
    assert.equal(await sweep.runNow(), 0, "its silence before the observer's contact does not count");
    assert.equal(finished.size, 0);
    await sleep(LEASE_MS + 50);
    await sweep.runNow();
    assert.equal(finished.get("req_quiet")?.status, "interrupted");
  } finally {
    await sweep.stop();
    await state.close();
  }
});
