// One contract for both limit-counter implementations: the Lua scripts on a real Redis and the
// in-process maps must behave the same, step by step.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { Redis } from "ioredis";
import { requireMode, TEST_REDIS_URL } from "../../../test/helpers/storage-modes.js";
import {
  LIMIT_KEYS,
  type LimitCounters,
  type ReserveInput,
  type ReserveReply,
} from "../../limits/limit-counters.js";
import { computeLimitWindows } from "../../limits/limit-windows.js";
import { createInProcessLimitCounters } from "./in-process-limit-counters.js";
import { createRedisLimitCounters } from "./redis-limit-counters.js";
import { openRedisScriptRunner } from "./redis-script-runner.js";

const NO_LIMITS = { daily: null, monthly: null, total: null };
/** The epoch every test's counters are created with (checkEpoch on a fresh store). */
const EPOCH = "epoch-1";

function forEachCounterMode(
  title: string,
  fn: (counters: LimitCounters, t: TestContext) => Promise<void>,
): void {
  test(`${title} [in-process]`, async (t) => {
    const counters = createInProcessLimitCounters();
    try {
      await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 0 });
      await fn(counters, t);
    } finally {
      await counters.close();
    }
  });
  test(`${title} [redis]`, async (t) => {
    if (!(await requireMode(t, "redis"))) return;
    const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
    const counters = createRedisLimitCounters(
      await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix }),
    );
    try {
      await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 0 });
      await fn(counters, t);
    } finally {
      await counters.close();
      await deleteKeys(prefix);
    }
  });
}

async function deleteKeys(prefix: string): Promise<void> {
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
  } finally {
    client.disconnect();
  }
}

function createIds() {
  const suffix = randomBytes(4).toString("hex");
  return { keyId: `key_${suffix}`, workspaceId: `ws_${suffix}` };
}

function reserveInput(
  ids: { keyId: string; workspaceId: string },
  requestId: string,
  overrides: Partial<ReserveInput> = {},
): ReserveInput {
  return {
    requestId,
    ...ids,
    amountMicroUsd: 1_000,
    limits: NO_LIMITS,
    checkBalance: true,
    requestsPerMinute: null,
    windows: computeLimitWindows(Date.now(), null),
    leaseTtlMs: 60_000,
    epoch: EPOCH,
    ...overrides,
  };
}

/** Reserves, seeding from the given Postgres values (no in-flight requests) when asked to. */
async function reserveSeeded(
  counters: LimitCounters,
  input: ReserveInput,
  base: { daily?: number; monthly?: number; total?: number; balance?: number } = {},
): Promise<ReserveReply> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const reply = await counters.reserve(input);
    if (reply.kind !== "seed") return reply;
    assert.equal(
      await counters.finishSeed({
        token: reply.token,
        keyId: input.keyId,
        workspaceId: input.workspaceId,
        windows: input.windows,
        counters: reply.counters.map((name) => ({ name, baseMicroUsd: base[name] ?? 0, adjustments: [] })),
      }),
      true,
    );
  }
  throw new Error("still asked to seed after 5 attempts");
}

function settleInput(ids: { keyId: string; workspaceId: string }, requestId: string, costMicroUsd: number) {
  return { requestId, ...ids, windows: computeLimitWindows(Date.now(), null), costMicroUsd };
}

forEachCounterMode("missing counters are seeded once, then reservations are held", async (counters) => {
  const ids = createIds();
  const first = await counters.reserve(
    reserveInput(ids, "req_1", { limits: { ...NO_LIMITS, total: 5_000 } }),
  );
  assert.equal(first.kind, "seed");
  assert.deepEqual(first.kind === "seed" && [...first.counters].sort(), ["balance", "total"]);
  // Someone else asking meanwhile waits for the seed instead of seeding again.
  assert.deepEqual(await counters.reserve(reserveInput(ids, "req_2")), { kind: "wait" });
  assert.equal(
    await counters.finishSeed({
      token: "someone-else",
      ...ids,
      windows: computeLimitWindows(Date.now(), null),
      counters: [{ name: "total", baseMicroUsd: 0, adjustments: [] }],
    }),
    false,
    "only the marker's owner may finish the seed",
  );
  assert.equal(
    await counters.finishSeed({
      token: first.kind === "seed" ? first.token : "",
      ...ids,
      windows: computeLimitWindows(Date.now(), null),
      counters: [
        { name: "total", baseMicroUsd: 3_000, adjustments: [] },
        { name: "balance", baseMicroUsd: 10_000, adjustments: [] },
      ],
    }),
    true,
  );
  const ok = await counters.reserve(reserveInput(ids, "req_1", { limits: { ...NO_LIMITS, total: 5_000 } }));
  assert.equal(ok.kind, "ok");
  assert.deepEqual(await counters.readReserved(ids.workspaceId, ids.keyId), {
    keyMicroUsd: 1_000,
    workspaceMicroUsd: 1_000,
  });
});

forEachCounterMode("the tightest failing check is reported with its headroom", async (counters) => {
  const ids = createIds();
  const limits = { daily: 10_000, monthly: 8_000, total: 5_000 };
  const base = { daily: 1_000, monthly: 1_000, total: 3_000, balance: 100_000 };
  assert.equal(
    (await reserveSeeded(counters, reserveInput(ids, "a", { limits, amountMicroUsd: 1_500 }), base)).kind,
    "ok",
  );
  // total: 5000 − 3000 − 1500 = 500 left; monthly: 8000 − 1000 − 1500 = 5500.
  assert.deepEqual(await counters.reserve(reserveInput(ids, "b", { limits, amountMicroUsd: 1_000 })), {
    kind: "limit",
    counter: "total",
    headroomMicroUsd: 500,
  });
  assert.equal((await counters.reserve(reserveInput(ids, "c", { limits, amountMicroUsd: 500 }))).kind, "ok");
  assert.deepEqual(await counters.reserve(reserveInput(ids, "d", { limits, amountMicroUsd: 1 })), {
    kind: "limit",
    counter: "total",
    headroomMicroUsd: 0,
  });
});

forEachCounterMode("the balance counts every key's reservations, unless invoicing", async (counters) => {
  const ids = createIds();
  const other = { ...ids, keyId: `${ids.keyId}_2` };
  assert.equal(
    (await reserveSeeded(counters, reserveInput(ids, "a", { amountMicroUsd: 1_500 }), { balance: 2_000 }))
      .kind,
    "ok",
  );
  assert.deepEqual(await reserveSeeded(counters, reserveInput(other, "b", { amountMicroUsd: 1_000 })), {
    kind: "limit",
    counter: "balance",
    headroomMicroUsd: 500,
  });
  const invoicing = await counters.reserve(
    reserveInput(other, "c", { amountMicroUsd: 1_000, checkBalance: false }),
  );
  assert.equal(invoicing.kind, "ok");
});

forEachCounterMode("settlement replaces the reservation with the cost, once", async (counters) => {
  const ids = createIds();
  const limits = { ...NO_LIMITS, total: 5_000 };
  await reserveSeeded(counters, reserveInput(ids, "a", { limits, amountMicroUsd: 2_000 }), {
    total: 1_000,
    balance: 10_000,
  });
  assert.equal(await counters.settle(settleInput(ids, "a", 700)), "settled");
  assert.deepEqual(await counters.readReserved(ids.workspaceId, ids.keyId), {
    keyMicroUsd: 0,
    workspaceMicroUsd: 0,
  });
  // 5000 − 1700 = 3300 left.
  assert.deepEqual(await counters.reserve(reserveInput(ids, "b", { limits, amountMicroUsd: 3_301 })), {
    kind: "limit",
    counter: "total",
    headroomMicroUsd: 3_300,
  });
  // A second settlement finds no lease: nothing is added twice; the counters are re-seeded instead.
  assert.equal(await counters.settle(settleInput(ids, "a", 700)), "no-lease");
  const next = await counters.reserve(reserveInput(ids, "b", { limits, amountMicroUsd: 100 }));
  assert.equal(next.kind, "seed");
});

forEachCounterMode("a release (cost 0) frees the headroom and marks nothing stale", async (counters) => {
  const ids = createIds();
  const limits = { ...NO_LIMITS, total: 1_000 };
  await reserveSeeded(counters, reserveInput(ids, "a", { limits }), { balance: 10_000 });
  assert.equal((await counters.reserve(reserveInput(ids, "b", { limits }))).kind, "limit");
  await counters.settle(settleInput(ids, "a", 0));
  assert.equal((await counters.reserve(reserveInput(ids, "b", { limits }))).kind, "ok");
  assert.equal(await counters.settle(settleInput(ids, "never-admitted", 0)), "no-lease");
  assert.equal((await counters.reserve(reserveInput(ids, "c", { limits: NO_LIMITS }))).kind, "ok");
});

forEachCounterMode(
  "settlements asked for together (two workspaces, one without a lease) each get their own outcome",
  async (counters) => {
    const first = createIds();
    const second = createIds();
    const limits = { ...NO_LIMITS, total: 10_000 };
    for (const [ids, id] of [
      [first, "a"],
      [first, "b"],
      [second, "c"],
    ] as const) {
      const reply = await reserveSeeded(counters, reserveInput(ids, id, { limits, amountMicroUsd: 2_000 }), {
        balance: 100_000,
      });
      assert.equal(reply.kind, "ok");
    }
    // In one turn, as a group commit's settlements are.
    const outcomes = await Promise.all([
      counters.settle(settleInput(first, "a", 300)),
      counters.settle(settleInput(second, "never-admitted", 0)),
      counters.settle(settleInput(first, "b", 400)),
      counters.settle(settleInput(second, "c", 0)),
    ]);
    assert.deepEqual(outcomes, ["settled", "no-lease", "settled", "settled"]);
    assert.deepEqual(await counters.readReserved(first.workspaceId, first.keyId), {
      keyMicroUsd: 0,
      workspaceMicroUsd: 0,
    });
    assert.deepEqual(await counters.readReserved(second.workspaceId, second.keyId), {
      keyMicroUsd: 0,
      workspaceMicroUsd: 0,
    });
    // first: 10000 − 700 settled = 9300 left; second: nothing spent.
    assert.deepEqual(await counters.reserve(reserveInput(first, "d", { limits, amountMicroUsd: 9_301 })), {
      kind: "limit",
      counter: "total",
      headroomMicroUsd: 9_300,
    });
    assert.equal(
      (await counters.reserve(reserveInput(second, "e", { limits, amountMicroUsd: 10_000 }))).kind,
      "ok",
    );
  },
);

forEachCounterMode(
  "rate limit: a sliding minute per key, refused requests take no slot",
  async (counters) => {
    const ids = createIds();
    const input = (id: string) => reserveInput(ids, id, { requestsPerMinute: 2 });
    assert.equal((await reserveSeeded(counters, input("a"), { balance: 10_000 })).kind, "ok");
    assert.equal((await counters.reserve(input("b"))).kind, "ok");
    const refused = await counters.reserve(input("c"));
    assert.equal(refused.kind, "rate");
    assert.ok(refused.kind === "rate" && refused.retryAfterMs > 55_000 && refused.retryAfterMs <= 60_000);
    // A spend refusal does not consume a slot of another key's window.
    const other = { ...ids, keyId: `${ids.keyId}_2` };
    assert.equal(
      (await counters.reserve(reserveInput(other, "d", { requestsPerMinute: 1, amountMicroUsd: 20_000 })))
        .kind,
      "limit",
    );
    assert.equal((await counters.reserve(reserveInput(other, "e", { requestsPerMinute: 1 }))).kind, "ok");
  },
);

forEachCounterMode("windows of another day are refused with the store's time", async (counters) => {
  const ids = createIds();
  const yesterday = computeLimitWindows(Date.now() - 86_400_000, null);
  const reply = await counters.reserve(reserveInput(ids, "a", { windows: yesterday }));
  assert.equal(reply.kind, "clock");
  assert.ok(reply.kind === "clock" && Math.abs(reply.nowMs - Date.now()) < 5_000);
});

forEachCounterMode(
  "a seed while requests are in flight counts each cost exactly once",
  async (counters, t) => {
    for (const bIncluded of [false, true]) {
      await t.test(`B ${bIncluded ? "in" : "not in"} Postgres' snapshot`, async () => {
        const ids = createIds();
        const limits = { ...NO_LIMITS, total: 1_000_000 };
        await reserveSeeded(counters, reserveInput(ids, "a", { limits }), { balance: 10_000 });
        assert.equal((await counters.reserve(reserveInput(ids, "b", { limits }))).kind, "ok");
        // Something made the counters stale (e.g. a settlement whose lease had expired).
        await counters.settle(settleInput(ids, "lost", 1));
        const seed = await counters.reserve(reserveInput(ids, "d", { limits }));
        assert.equal(seed.kind, "seed");
        if (seed.kind !== "seed") return;
        assert.deepEqual(seed.leases.map((lease) => lease.requestId).sort(), ["a", "b"]);
        // B settles here while the seed runs: parked as pending, not added.
        assert.equal(await counters.settle(settleInput(ids, "b", 800)), "settled");
        // Postgres: A finished (700) and, in the second case, B too (800); neither settled here yet
        // except B.
        const spent = 700 + (bIncluded ? 800 : 0);
        const included = { a: 700, b: bIncluded ? 800 : 0 };
        const adjustments = seed.leases.map((lease) => ({
          requestId: lease.requestId,
          includedCostMicroUsd: included[lease.requestId as "a" | "b"],
        }));
        assert.equal(
          await counters.finishSeed({
            token: seed.token,
            ...ids,
            windows: computeLimitWindows(Date.now(), null),
            counters: seed.counters.map((name) => ({
              name,
              baseMicroUsd: name === "balance" ? 10_000 - spent : spent,
              adjustments,
            })),
          }),
          true,
        );
        await counters.settle(settleInput(ids, "a", 700));
        // Truth: 1500 spent, balance 8500. Probe the total with the exact headroom.
        assert.deepEqual(
          await counters.reserve(
            reserveInput(ids, "p", { limits, amountMicroUsd: 1_000_000, checkBalance: false }),
          ),
          {
            kind: "limit",
            counter: "total",
            headroomMicroUsd: 1_000_000 - 1_500,
          },
        );
        assert.deepEqual(await counters.reserve(reserveInput(ids, "q", { amountMicroUsd: 9_000 })), {
          kind: "limit",
          counter: "balance",
          headroomMicroUsd: 8_500,
        });
      });
    }
  },
);

forEachCounterMode(
  "an expired lease is released and its counters re-seeded; refresh keeps one",
  async (counters) => {
    const ids = createIds();
    const limits = { ...NO_LIMITS, total: 2_000 };
    await reserveSeeded(counters, reserveInput(ids, "short", { limits, leaseTtlMs: 150 }), {
      balance: 10_000,
    });
    assert.equal((await counters.reserve(reserveInput(ids, "kept", { limits, leaseTtlMs: 150 }))).kind, "ok");
    assert.equal(
      await counters.refresh({ requestId: "kept", workspaceId: ids.workspaceId, leaseTtlMs: 60_000 }),
      true,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The expired lease went; its counters are re-seeded (its instance may have settled Postgres).
    const reply = await counters.reserve(reserveInput(ids, "next", { limits }));
    assert.equal(reply.kind, "seed");
    assert.deepEqual(await counters.readReserved(ids.workspaceId, ids.keyId), {
      keyMicroUsd: 1_000,
      workspaceMicroUsd: 1_000,
    });
    assert.equal(
      await counters.refresh({ requestId: "short", workspaceId: ids.workspaceId, leaseTtlMs: 60_000 }),
      false,
    );
  },
);

test("in-process counters follow an injected clock across midnight", async () => {
  let now = Date.UTC(2028, 1, 28, 23, 59, 59, 500); // leap year: Feb 29 follows
  const counters = createInProcessLimitCounters({ now: () => now });
  await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 0 });
  const ids = createIds();
  const limits = { ...NO_LIMITS, daily: 1_000 };
  const windows = computeLimitWindows(now, null);
  await reserveSeeded(counters, reserveInput(ids, "a", { limits, windows }), { balance: 10_000 });
  await counters.settle({ requestId: "a", ...ids, windows, costMicroUsd: 1_000 });
  assert.equal((await counters.reserve(reserveInput(ids, "b", { limits, windows }))).kind, "limit");
  now += 1_000;
  assert.deepEqual(await counters.reserve(reserveInput(ids, "b", { limits, windows })), {
    kind: "clock",
    nowMs: now,
  });
  const next = computeLimitWindows(now, null);
  assert.equal(next.daily.id, "d20280229");
  assert.equal(
    (await reserveSeeded(counters, reserveInput(ids, "b", { limits, windows: next }), { balance: 9_000 }))
      .kind,
    "ok",
  );
});

/** A balance that never refuses. */
const FUNDS = { balance: 1_000_000 };

test("Redis lost its memory: reserve asks for the new epoch, which recovers; re-published leases count against the limits before anything is admitted", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const counters = createRedisLimitCounters(
    await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix }),
  );
  try {
    const first = await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 400 });
    assert.deepEqual(first, { epoch: EPOCH, recoveringMs: 0 }, "a fresh store: nothing to recover");
    const ids = createIds();
    const limits = { daily: null, monthly: null, total: 3_000 };
    assert.equal((await reserveSeeded(counters, reserveInput(ids, "a", { limits }), FUNDS)).kind, "ok");
    assert.equal((await reserveSeeded(counters, reserveInput(ids, "b", { limits }), FUNDS)).kind, "ok");

    await deleteKeys(prefix); // Restarted empty.
    assert.deepEqual(await counters.reserve(reserveInput(ids, "c", { limits })), { kind: "epoch" });
    const second = await counters.checkEpoch({ known: EPOCH, candidate: "epoch-2", recoveryMs: 400 });
    assert.equal(second.epoch, "epoch-2");
    assert.ok(second.recoveringMs > 300, `recovering for ${second.recoveringMs} ms`);
    // A new instance meets the same epoch and its recovery.
    assert.equal(
      (await counters.checkEpoch({ known: "", candidate: "other", recoveryMs: 400 })).epoch,
      "epoch-2",
    );
    const recovering = await counters.reserve(reserveInput(ids, "c", { limits, epoch: "epoch-2" }));
    assert.equal(recovering.kind, "recovering");
    // No limit to check, but no counter may be seeded yet: the balance counter is missing.
    const freeInput = reserveInput({ workspaceId: ids.workspaceId, keyId: "key_free" }, "free", {
      limits: NO_LIMITS,
      checkBalance: false,
      epoch: "epoch-2",
    });
    assert.equal((await counters.reserve(freeInput)).kind, "recovering");

    const held = [
      { requestId: "a", keyId: ids.keyId, amountMicroUsd: 1_000 },
      { requestId: "b", keyId: ids.keyId, amountMicroUsd: 1_000 },
    ];
    assert.equal(
      await counters.republish({
        epoch: EPOCH,
        workspaceId: ids.workspaceId,
        leases: held,
        leaseTtlMs: 60_000,
      }),
      false,
    );
    const again = { epoch: "epoch-2", workspaceId: ids.workspaceId, leases: held, leaseTtlMs: 60_000 };
    assert.equal(await counters.republish(again), true);
    assert.equal(await counters.republish(again), true, "published twice, counted once");
    assert.deepEqual(await counters.readReserved(ids.workspaceId, ids.keyId), {
      keyMicroUsd: 2_000,
      workspaceMicroUsd: 2_000,
    });

    await new Promise((resolve) => setTimeout(resolve, 450));
    // Settled spend from Postgres is 0, but the re-published leases hold 2,000 of the 3,000.
    assert.equal(
      (await reserveSeeded(counters, reserveInput(ids, "c", { limits, epoch: "epoch-2" }), FUNDS)).kind,
      "ok",
    );
    assert.equal(
      (await reserveSeeded(counters, reserveInput(ids, "d", { limits, epoch: "epoch-2" }), FUNDS)).kind,
      "limit",
    );
    assert.equal(await counters.settle(settleInput(ids, "a", 400)), "settled");
    assert.deepEqual(await counters.readReserved(ids.workspaceId, ids.keyId), {
      keyMicroUsd: 2_000,
      workspaceMicroUsd: 2_000,
    });
  } finally {
    await counters.close();
    await deleteKeys(prefix);
  }
});

test("admissions and settlements of one turn each get their own reply, also after Redis dropped its scripts", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const counters = createRedisLimitCounters(
    await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix }),
  );
  const admin = new Redis(TEST_REDIS_URL);
  try {
    await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 0 });
    const ids = createIds();
    const limits = { ...NO_LIMITS, total: 3_000 };
    assert.equal((await reserveSeeded(counters, reserveInput(ids, "first", { limits }), FUNDS)).kind, "ok");
    // A restarted Redis has no scripts cached: each call of the turn's pipeline is sent again alone.
    await admin.script("FLUSH");
    const replies = await Promise.all(
      ["a", "b", "c"].map((id) => counters.reserve(reserveInput(ids, id, { limits }))),
    );
    // 3000 − 1000 (first) leaves room for two more of 1000, in the order they were asked for.
    assert.deepEqual(
      replies.map((reply) => reply.kind),
      ["ok", "ok", "limit"],
    );
    await admin.script("FLUSH");
    assert.deepEqual(
      await Promise.all(["first", "a", "b", "c"].map((id) => counters.settle(settleInput(ids, id, 100)))),
      ["settled", "settled", "settled", "no-lease"],
    );
  } finally {
    admin.disconnect();
    await counters.close();
    await deleteKeys(prefix);
  }
});

test("admissions of one turn are one script call, and one that fails in it fails alone", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const prefix = `gw_test_${randomBytes(6).toString("hex")}:`;
  const counters = createRedisLimitCounters(
    await openRedisScriptRunner({ redisUrl: TEST_REDIS_URL, prefix }),
  );
  const admin = new Redis(TEST_REDIS_URL);
  const monitored = new Redis(TEST_REDIS_URL);
  const monitor = await monitored.monitor();
  try {
    await counters.checkEpoch({ known: "", candidate: EPOCH, recoveryMs: 0 });
    const healthy = createIds();
    const broken = createIds();
    for (const ids of [healthy, broken]) {
      assert.equal((await reserveSeeded(counters, reserveInput(ids, `seed-${ids.keyId}`), FUNDS)).kind, "ok");
    }
    // Redis holds the batch form (an earlier test may have flushed its scripts).
    await Promise.all(["warm-1", "warm-2"].map((id) => counters.reserve(reserveInput(healthy, id))));
    // The broken workspace's deadlines are no sorted set: its admission's script raises WRONGTYPE.
    await admin.set(prefix + LIMIT_KEYS.deadlines(broken.workspaceId), "not a sorted set");

    // Script calls this client sends (not the commands a script runs) naming this test's keys,
    // between two markers: Redis reports commands to a monitor in the order it runs them, so
    // nothing before the first marker or after the second is counted, whenever it arrives.
    const calls: string[] = [];
    let counting = false;
    let ended: () => void = () => {};
    const end = new Promise<void>((resolve) => {
      ended = resolve;
    });
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (/lua/.test(source)) return;
      if (args[0]?.toLowerCase() === "echo" && args[1] === `${prefix}start`) counting = true;
      else if (args[0]?.toLowerCase() === "echo" && args[1] === `${prefix}end`) ended();
      else if (counting && /^eval/i.test(args[0] ?? "") && args.some((arg) => arg.startsWith(prefix)))
        calls.push(args[0]!);
    });
    await admin.echo(`${prefix}start`);
    const replies = await Promise.allSettled([
      counters.reserve(reserveInput(healthy, "a")),
      counters.reserve(reserveInput(broken, "b")),
      counters.reserve(reserveInput(healthy, "c")),
      counters.reserve(reserveInput(healthy, "d")),
    ]);
    assert.deepEqual(
      replies.map((reply) => (reply.status === "fulfilled" ? reply.value.kind : "rejected")),
      ["ok", "rejected", "ok", "ok"],
    );
    assert.match(String((replies[1] as PromiseRejectedResult).reason), /WRONGTYPE/);
    await admin.echo(`${prefix}end`);
    // Bounded: a monitor that never reports the marker fails the test instead of holding the run.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      end,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("the monitor never reported the end marker")), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(calls, ["evalsha"], "four admissions, one script call");
    assert.deepEqual(
      await Promise.all(["a", "c", "d"].map((id) => counters.settle(settleInput(healthy, id, 100)))),
      ["settled", "settled", "settled"],
    );
  } finally {
    monitor.disconnect();
    monitored.disconnect();
    admin.disconnect();
    await counters.close();
    await deleteKeys(prefix);
  }
});
