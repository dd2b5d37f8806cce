/** LimitCounters on Redis: each step is one Lua script (limit-scripts.ts), shared by every instance. */

import {
  type CounterName,
  type CounterTimings,
  DEFAULT_COUNTER_TIMINGS,
  type Headroom,
  LIMIT_KEYS,
  type LimitCounters,
  type ReserveReply,
  type SettleInput,
} from "../../limits/limit-counters.js";
import type { LimitWindows } from "../../limits/limit-windows.js";
import {
  EPOCH_SCRIPT,
  FINISH_SEED_SCRIPT,
  FORGET_BALANCE_SCRIPT,
  READ_RESERVED_SCRIPT,
  REFRESH_SCRIPT,
  REPUBLISH_SCRIPT,
  RESERVE_SCRIPT,
  SETTLE_SCRIPT,
  TIME_SCRIPT,
} from "./limit-scripts.js";
import type { ScriptReply, ScriptRunner } from "./redis-script-runner.js";

/** Balance counters of idle workspaces disappear after a day (they are re-seeded on next use). */
const BALANCE_TTL_MS = 24 * 60 * 60_000;

/** The order of the headroom elements of an admission's reply (limit-scripts.ts). */
const HEADROOM_FIELDS = ["daily", "monthly", "total", "balance"] as const;

function spendKeys(keyId: string, windows: LimitWindows): string[] {
  return [
    LIMIT_KEYS.spend(keyId, windows.daily.id),
    LIMIT_KEYS.spend(keyId, windows.monthly.id),
    LIMIT_KEYS.spend(keyId, windows.total.id),
  ];
}

function money(value: number | null): string {
  return value === null ? "" : String(value);
}

function readNumber(reply: ScriptReply, what: string): number {
  const value = typeof reply === "string" ? Number(reply) : reply;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new Error(`Unexpected ${what} from Redis: ${JSON.stringify(reply)}`);
  }
  return value;
}

export function createRedisLimitCounters(
  runner: ScriptRunner,
  timings: CounterTimings = DEFAULT_COUNTER_TIMINGS,
): LimitCounters {
  const settlements = settlementsPerTurn(runner);
  return {
    mode: "redis",

    async reserve(input) {
      const { windows, limits, record } = input;
      const keys = [
        LIMIT_KEYS.rate(input.keyId),
        LIMIT_KEYS.leases(input.workspaceId),
        LIMIT_KEYS.deadlines(input.workspaceId),
        LIMIT_KEYS.reserved(input.workspaceId),
        LIMIT_KEYS.stale(input.workspaceId),
        LIMIT_KEYS.balance(input.workspaceId),
        ...spendKeys(input.keyId, windows),
        LIMIT_KEYS.epoch(),
      ];
      const args = [
        input.requestId,
        input.keyId,
        String(input.amountMicroUsd),
        String(input.requestsPerMinute ?? 0),
        String(timings.rateWindowMs),
        String(windows.daily.startMs),
        String(windows.daily.endMs),
        String(windows.monthly.startMs),
        String(windows.monthly.endMs),
        money(limits.daily),
        money(limits.monthly),
        money(limits.total),
        input.checkBalance ? "1" : "0",
        String(input.leaseTtlMs),
        String(timings.seedMarkerTtlMs),
        String(timings.spendMaxAgeMs),
        String(timings.balanceMaxAgeMs),
        String(timings.totalIdleTtlMs),
        input.epoch,
      ];
      if (record !== undefined) {
        keys.push(record.key, ...record.indexes);
        args.push(record.valueBefore, record.valueAfter, String(record.ttlMs), record.member);
      }
      // Admission: the request waits for it, so it never queues behind background scripts.
      const reply = (await runner.run(RESERVE_SCRIPT, keys, args, "request")) as ScriptReply[];
      return readReserveReply(reply);
    },

    async finishSeed(input) {
      const args: string[] = [
        input.token,
        String(input.windows.daily.endMs! + timings.windowGraceMs),
        String(input.windows.monthly.endMs! + timings.windowGraceMs),
        String(timings.totalIdleTtlMs),
        String(BALANCE_TTL_MS),
      ];
      for (const counter of input.counters) {
        args.push(counter.name, String(counter.baseMicroUsd), String(counter.adjustments.length));
        for (const adjustment of counter.adjustments) {
          args.push(adjustment.requestId, String(adjustment.includedCostMicroUsd));
        }
      }
      const reply = await runner.run(
        FINISH_SEED_SCRIPT,
        [
          LIMIT_KEYS.leases(input.workspaceId),
          LIMIT_KEYS.balance(input.workspaceId),
          ...spendKeys(input.keyId, input.windows),
        ],
        args,
        // Part of an admission (the counters it needs were missing).
        "request",
      );
      return readNumber(reply, "seed reply") === 1;
    },

    settle: (input) => settlements.add(input),

    async refresh({ requestId, workspaceId, leaseTtlMs }) {
      const reply = await runner.run(
        REFRESH_SCRIPT,
        [LIMIT_KEYS.leases(workspaceId), LIMIT_KEYS.deadlines(workspaceId)],
        [requestId, String(leaseTtlMs)],
      );
      return readNumber(reply, "refresh reply") === 1;
    },

    async readReserved(workspaceId, keyId) {
      const [key, workspace] = (await runner.run(
        READ_RESERVED_SCRIPT,
        [LIMIT_KEYS.reserved(workspaceId)],
        [keyId],
      )) as ScriptReply[];
      return {
        keyMicroUsd: key === null ? 0 : readNumber(key, "reserved amount"),
        workspaceMicroUsd: workspace === null ? 0 : readNumber(workspace, "reserved amount"),
      };
    },

    async forgetBalance(workspaceId) {
      await runner.run(FORGET_BALANCE_SCRIPT, [LIMIT_KEYS.balance(workspaceId)], []);
    },

    async checkEpoch({ known, candidate, recoveryMs }) {
      const [epoch, recoveringMs] = (await runner.run(
        EPOCH_SCRIPT,
        [LIMIT_KEYS.epoch()],
        [known, candidate, String(recoveryMs)],
      )) as ScriptReply[];
      return { epoch: String(epoch), recoveringMs: readNumber(recoveringMs, "recovery time") };
    },

    async republish({ epoch, workspaceId, leases, leaseTtlMs }) {
      const args: string[] = [epoch, String(leaseTtlMs)];
      for (const lease of leases) args.push(lease.requestId, lease.keyId, String(lease.amountMicroUsd));
      const reply = await runner.run(
        REPUBLISH_SCRIPT,
        [
          LIMIT_KEYS.epoch(),
          LIMIT_KEYS.leases(workspaceId),
          LIMIT_KEYS.deadlines(workspaceId),
          LIMIT_KEYS.reserved(workspaceId),
        ],
        args,
      );
      return readNumber(reply, "republish reply") === 1;
    },

    async now() {
      const [seconds, microseconds] = (await runner.run(TIME_SCRIPT, [], [])) as ScriptReply[];
      return readNumber(seconds, "TIME") * 1000 + Math.floor(readNumber(microseconds, "TIME") / 1000);
    },

    close: () => runner.close(),
  };
}

/** At most this many settlements in one script call, so that no call holds Redis for long. */
const MAX_SETTLEMENTS_PER_CALL = 100;

/**
 * Settlements asked for in one event-loop turn (those of one group commit of records, typically)
 * go to Redis as one script call instead of one each: a request's settlement is then a share of
 * one command, not a command of its own.
 */
function settlementsPerTurn(runner: ScriptRunner) {
  interface Pending {
    readonly input: SettleInput;
    readonly resolve: (outcome: "settled" | "no-lease") => void;
    readonly reject: (error: unknown) => void;
  }
  let pending: Pending[] = [];
  const send = async (batch: Pending[]) => {
    const keys: string[] = [];
    const args: string[] = [];
    for (const { input } of batch) {
      keys.push(
        LIMIT_KEYS.leases(input.workspaceId),
        LIMIT_KEYS.deadlines(input.workspaceId),
        LIMIT_KEYS.reserved(input.workspaceId),
        LIMIT_KEYS.stale(input.workspaceId),
        LIMIT_KEYS.balance(input.workspaceId),
        ...spendKeys(input.keyId, input.windows),
      );
      args.push(input.requestId, input.keyId, String(input.costMicroUsd));
    }
    try {
      const reply = await runner.run(SETTLE_SCRIPT, keys, args);
      if (!Array.isArray(reply) || reply.length !== batch.length) {
        throw new Error(`Unexpected settle reply from Redis: ${JSON.stringify(reply)}`);
      }
      for (let index = 0; index < batch.length; index++) {
        batch[index]!.resolve(readNumber(reply[index]!, "settle reply") === 1 ? "settled" : "no-lease");
      }
    } catch (error) {
      for (const settlement of batch) settlement.reject(error);
    }
  };
  const flush = () => {
    const all = pending;
    pending = [];
    for (let start = 0; start < all.length; start += MAX_SETTLEMENTS_PER_CALL) {
      void send(all.slice(start, start + MAX_SETTLEMENTS_PER_CALL));
    }
  };
  return {
    add(input: SettleInput): Promise<"settled" | "no-lease"> {
      return new Promise((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({ input, resolve, reject });
      });
    },
  };
}

function readReserveReply(reply: ScriptReply[]): ReserveReply {
  switch (reply[0]) {
    case "ok": {
      const nowMs = readNumber(reply[1], "time");
      const recordStored = reply[2] === 1;
      // Four more elements when the key has a spend limit (limit-scripts.ts).
      if (reply.length <= 3) return { kind: "ok", nowMs, recordStored };
      const headroom: Headroom = {};
      for (let index = 0; index < HEADROOM_FIELDS.length; index++) {
        const value = reply[3 + index];
        // Redis turns the script's `false` (not checked) into nil.
        if (value !== null && value !== undefined)
          headroom[HEADROOM_FIELDS[index]] = readNumber(value, "headroom");
      }
      return { kind: "ok", nowMs, recordStored, headroom };
    }
    case "clock":
      return { kind: "clock", nowMs: readNumber(reply[1], "time") };
    case "rate":
      return { kind: "rate", retryAfterMs: readNumber(reply[1], "retry time") };
    case "wait":
      return { kind: "wait" };
    case "epoch":
      return { kind: "epoch" };
    case "recovering":
      return { kind: "recovering", retryAfterMs: readNumber(reply[1], "recovery time") };
    case "limit":
      return {
        kind: "limit",
        counter: reply[1] as CounterName,
        headroomMicroUsd: readNumber(reply[2], "headroom"),
      };
    case "seed": {
      const flat = (reply[4] as string[] | null) ?? [];
      const leases = [];
      for (let index = 0; index < flat.length; index += 2) {
        const keyId = flat[index + 1].slice(0, flat[index + 1].indexOf("|"));
        leases.push({ requestId: flat[index], keyId });
      }
      return {
        kind: "seed",
        nowMs: readNumber(reply[1], "time"),
        token: String(reply[2]),
        counters: reply[3] as CounterName[],
        leases,
      };
    }
    default:
      throw new Error(`Unexpected reserve reply from Redis: ${JSON.stringify(reply)}`);
  }
}
