/**
 * LimitCounters for embedded mode (one process): the steps of limit-scripts.ts in TypeScript over
 * maps. Each method does its work synchronously before its first await point, so, like a Lua
 * script, it is atomic with respect to every other step. The clock is the process clock
 * (injectable for tests of window boundaries).
 */
import {
  type CounterName,
  type CounterTimings,
  DEFAULT_COUNTER_TIMINGS,
  type Headroom,
  type LimitCounters,
  type ReserveReply,
} from "../../limits/limit-counters.js";
import type { LimitWindows } from "../../limits/limit-windows.js";

/** The spend counters, in the order of the states read at admission. */
const SPEND_COUNTERS = ["daily", "monthly", "total"] as const;

interface Counter {
  value?: number;
  seededAt?: number;
  seeding?: string;
  pending: Map<string, number>;
  expiresAt: number;
}

interface Lease {
  keyId: string;
  amount: number;
  deadline: number;
}

interface WorkspaceState {
  leases: Map<string, Lease>;
  /** Per key id, and "*" for the whole workspace. */
  reserved: Map<string, number>;
  stale: Set<string>;
}

export function createInProcessLimitCounters(
  options: { now?: () => number; timings?: CounterTimings } = {},
): LimitCounters {
  const clock = options.now ?? Date.now;
  const timings = options.timings ?? DEFAULT_COUNTER_TIMINGS;
  const workspaces = new Map<string, WorkspaceState>();
  const counters = new Map<string, Counter>();
  const rateWindows = new Map<string, Array<{ at: number; requestId: string }>>();
  /** Created by the first `checkEpoch`; a process never loses its own memory, so it never changes. */
  let epoch: string | undefined;

  function workspaceState(workspaceId: string): WorkspaceState {
    let state = workspaces.get(workspaceId);
    if (!state) {
      state = { leases: new Map(), reserved: new Map(), stale: new Set() };
      workspaces.set(workspaceId, state);
    }
    return state;
  }

  function counterKey(name: CounterName, keyId: string, workspaceId: string, windows: LimitWindows): string {
    return name === "balance" ? `ws:${workspaceId}:balance` : `key:${keyId}:${windows[name].id}`;
  }

  /** The counter, or undefined when missing or past its expiry (like a Redis key). */
  function readCounter(key: string, now: number): Counter | undefined {
    const counter = counters.get(key);
    if (counter && counter.expiresAt <= now) {
      counters.delete(key);
      return undefined;
    }
    return counter;
  }

  function addReserved(state: WorkspaceState, field: string, amount: number): void {
    const left = (state.reserved.get(field) ?? 0) + amount;
    if (left <= 0) state.reserved.delete(field);
    else state.reserved.set(field, left);
  }

  function releaseLease(state: WorkspaceState, requestId: string, lease: Lease): void {
    addReserved(state, lease.keyId, -lease.amount);
    addReserved(state, "*", -lease.amount);
    state.leases.delete(requestId);
  }

  function reserveNow(input: Parameters<LimitCounters["reserve"]>[0]): ReserveReply {
    const now = clock();
    const { windows } = input;
    if (
      now < windows.daily.startMs ||
      now >= windows.daily.endMs! ||
      now < windows.monthly.startMs ||
      now >= windows.monthly.endMs!
    ) {
      return { kind: "clock", nowMs: now };
    }
    if (input.epoch !== epoch) return { kind: "epoch" };
    const state = workspaceState(input.workspaceId);
    for (const [requestId, lease] of state.leases) {
      if (lease.deadline > now) continue;
      releaseLease(state, requestId, lease);
      state.stale.add(lease.keyId).add("*");
    }
    const keyOf = (name: CounterName) => counterKey(name, input.keyId, input.workspaceId, windows);
    if (state.stale.delete(input.keyId)) {
      for (const name of ["daily", "monthly", "total"] as const) counters.delete(keyOf(name));
    }
    if (state.stale.delete("*")) counters.delete(keyOf("balance"));

    const rpm = input.requestsPerMinute ?? 0;
    let window = rateWindows.get(input.keyId) ?? [];
    if (rpm > 0) {
      window = window.filter((entry) => entry.at > now - timings.rateWindowMs);
      rateWindows.set(input.keyId, window);
      if (window.length >= rpm) {
        return { kind: "rate", retryAfterMs: window[0].at + timings.rateWindowMs - now };
      }
    }

    const limits = { daily: input.limits.daily, monthly: input.limits.monthly, total: input.limits.total };
    const names: CounterName[] = ["daily", "monthly", "total", "balance"];
    const wanted = (name: CounterName) => name === "balance" || limits[name] !== null;
    const states = names.map((name) => readCounter(keyOf(name), now));
    if (states.some((counter) => counter?.seeding !== undefined)) return { kind: "wait" };
    const missing: CounterName[] = [];
    names.forEach((name, index) => {
      const counter = states[index];
      const maxAge = name === "balance" ? timings.balanceMaxAgeMs : timings.spendMaxAgeMs;
      if (!wanted(name)) return;
      if (counter?.value !== undefined && now - counter.seededAt! < maxAge) return;
      counters.set(keyOf(name), {
        seeding: input.requestId,
        pending: new Map(),
        expiresAt: now + timings.seedMarkerTtlMs,
      });
      missing.push(name);
    });
    if (missing.length > 0) {
      const leases = [...state.leases].map(([requestId, lease]) => ({ requestId, keyId: lease.keyId }));
      return { kind: "seed", nowMs: now, token: input.requestId, counters: missing, leases };
    }

    const need = input.amountMicroUsd;
    const reservedKey = state.reserved.get(input.keyId) ?? 0;
    let failure: { counter: CounterName; headroomMicroUsd: number } | undefined;
    const consider = (counter: CounterName, headroom: number) => {
      if (headroom < need && (failure === undefined || headroom < failure.headroomMicroUsd)) {
        failure = { counter, headroomMicroUsd: headroom };
      }
    };
    // Kept only for a key with a spend limit: the admission answers with it (its headers).
    let headroom: Headroom | undefined;
    for (let index = 0; index < SPEND_COUNTERS.length; index++) {
      const name = SPEND_COUNTERS[index];
      const limit = limits[name];
      if (limit === null) continue;
      const left = limit - states[index]!.value! - reservedKey;
      consider(name, left);
      headroom ??= {};
      headroom[name] = left - need;
    }
    if (input.checkBalance) {
      const left = states[3]!.value! - (state.reserved.get("*") ?? 0);
      consider("balance", left);
      if (headroom !== undefined) headroom.balance = left - need;
    }
    if (failure) return { kind: "limit", ...failure };

    if (rpm > 0) window.push({ at: now, requestId: input.requestId });
    state.leases.set(input.requestId, {
      keyId: input.keyId,
      amount: need,
      deadline: now + input.leaseTtlMs,
    });
    addReserved(state, input.keyId, need);
    addReserved(state, "*", need);
    if (limits.total !== null) states[2]!.expiresAt = now + timings.totalIdleTtlMs;
    return headroom === undefined ? { kind: "ok", nowMs: now } : { kind: "ok", nowMs: now, headroom };
  }

  return {
    mode: "in-process",

    async reserve(input) {
      return reserveNow(input);
    },

    async finishSeed(input) {
      const now = clock();
      const state = workspaceState(input.workspaceId);
      let allSet = true;
      for (const spec of input.counters) {
        const key = counterKey(spec.name, input.keyId, input.workspaceId, input.windows);
        const counter = readCounter(key, now);
        if (counter?.seeding !== input.token) {
          allSet = false;
          continue;
        }
        // A cost raises a spend counter and lowers the balance.
        const sign = spec.name === "balance" ? -1 : 1;
        let value = spec.baseMicroUsd;
        for (const { requestId, includedCostMicroUsd } of spec.adjustments) {
          const pending = counter.pending.get(requestId);
          if (state.leases.has(requestId)) value -= sign * includedCostMicroUsd;
          else if (pending !== undefined && includedCostMicroUsd === 0) value += sign * pending;
        }
        const expiresAt =
          spec.name === "daily"
            ? input.windows.daily.endMs! + timings.windowGraceMs
            : spec.name === "monthly"
              ? input.windows.monthly.endMs! + timings.windowGraceMs
              : spec.name === "total"
                ? now + timings.totalIdleTtlMs
                : Number.POSITIVE_INFINITY;
        counters.set(key, { value, seededAt: now, pending: new Map(), expiresAt });
      }
      return allSet;
    },

    async settle(input) {
      const now = clock();
      const state = workspaceState(input.workspaceId);
      const lease = state.leases.get(input.requestId);
      if (!lease) {
        if (input.costMicroUsd !== 0) state.stale.add(input.keyId).add("*");
        return "no-lease";
      }
      releaseLease(state, input.requestId, lease);
      if (input.costMicroUsd !== 0) {
        for (const name of ["balance", "daily", "monthly", "total"] as const) {
          const counter = readCounter(counterKey(name, input.keyId, input.workspaceId, input.windows), now);
          if (!counter) continue;
          if (counter.seeding !== undefined) counter.pending.set(input.requestId, input.costMicroUsd);
          else if (counter.value !== undefined) {
            counter.value += name === "balance" ? -input.costMicroUsd : input.costMicroUsd;
          }
        }
      }
      return "settled";
    },

    async refresh({ requestId, workspaceId, leaseTtlMs }) {
      const lease = workspaces.get(workspaceId)?.leases.get(requestId);
      if (!lease) return false;
      lease.deadline = clock() + leaseTtlMs;
      return true;
    },

    async readReserved(workspaceId, keyId) {
      const state = workspaces.get(workspaceId);
      return {
        keyMicroUsd: state?.reserved.get(keyId) ?? 0,
        workspaceMicroUsd: state?.reserved.get("*") ?? 0,
      };
    },

    async forgetBalance(workspaceId) {
      counters.delete(`ws:${workspaceId}:balance`);
    },

    async checkEpoch({ candidate }) {
      epoch ??= candidate;
      return { epoch, recoveringMs: 0 };
    },

    async republish(input) {
      if (input.epoch !== epoch) return false;
      const state = workspaceState(input.workspaceId);
      const deadline = clock() + input.leaseTtlMs;
      for (const lease of input.leases) {
        if (state.leases.has(lease.requestId)) continue;
        state.leases.set(lease.requestId, { keyId: lease.keyId, amount: lease.amountMicroUsd, deadline });
        addReserved(state, lease.keyId, lease.amountMicroUsd);
        addReserved(state, "*", lease.amountMicroUsd);
      }
      return true;
    },

    async now() {
      return clock();
    },

    async close() {
      workspaces.clear();
      counters.clear();
      rateWindows.clear();
    },
  };
}
