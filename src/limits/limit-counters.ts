/**
 * The atomic steps behind spend and rate limits, shared by every instance. Two implementations with
 * the same behaviour: Lua scripts on Redis (distributed mode) and plain maps (embedded mode, one
 * process), both in storage/shared-state/ (whose `limit-counters.test.ts` holds them to one
 * contract); this file is the port they implement, `spend-guard.ts` drives them.
 *
 * State, per workspace W and key K (micro-USD integers):
 * - leases of W: request id → (key, reserved amount), each with a deadline; an expired lease (its
 *   instance crashed or went silent) is released by the next reserve, and the counters it may have
 *   missed are marked stale.
 * - reserved of W: per key and in total, the sum of W's leases (kept with the leases, atomically).
 * - counters: K's settled spend per window (day, month, total), and W's balance. Each is a cache of
 *   Postgres, seeded from it when missing, stale or older than its maximum age, with a protocol that
 *   makes the seed exact while requests are in flight (see `seed-counters.ts`).
 * - the rate window of K: admission times of the last 60 s.
 * - the epoch: an id the store's memory was started with. Redis that comes back empty (restarted
 *   without persistence, flushed) has lost every lease while their requests still run; a new epoch
 *   then opens with a recovery period during which nothing is admitted against a limit, and every
 *   instance publishes its live reservations into it again before it admits (`spend-guard.ts`).
 */
import type { LimitWindows } from "./limit-windows.js";

export type CounterName = "daily" | "monthly" | "total" | "balance";
export const COUNTER_NAMES: readonly CounterName[] = ["daily", "monthly", "total", "balance"];

export interface ReserveInput {
  requestId: string;
  keyId: string;
  workspaceId: string;
  amountMicroUsd: number;
  /** Spend limits to check (null: none). The balance is checked when `checkBalance`. */
  limits: { daily: number | null; monthly: number | null; total: number | null };
  checkBalance: boolean;
  /** null: no rate limit. */
  requestsPerMinute: number | null;
  /** Computed from the caller's idea of now; a reserve on another day or month answers `clock`. */
  windows: LimitWindows;
  leaseTtlMs: number;
  /** The epoch this instance's reservations are published in ('' before it knows one). */
  epoch: string;
  /** Stored in the same atomic step when the reply is `ok` (see AdmissionRecord). */
  record?: AdmissionRecord;
}

/**
 * A record stored with an admitted reservation, in the same atomic step: distributed mode's
 * in-progress record of the request, so that admission and the record cost one round trip before
 * the upstream call (docs/performance.md). Stored only when the reservation is admitted: under
 * `key` for `ttlMs`, as `valueBefore` + the admission time (Unix ms, the limits' clock) +
 * `valueAfter`, and listed as `member` in each of `indexes`, scored by the admission time.
 * Implementations that cannot store it ignore it (the reply then says it was not stored).
 */
export interface AdmissionRecord {
  key: string;
  member: string;
  indexes: readonly string[];
  valueBefore: string;
  valueAfter: string;
  ttlMs: number;
}

/**
 * What each spend limit checked at an admission leaves once the admitted amount is held: the limit
 * minus the window's settled spend minus the key's reservations (this one included), and the
 * balance minus the workspace's reservations when it was checked. Micro-USD, never negative (the
 * amount was admitted). A window without a limit (or the balance of an invoicing workspace) is
 * absent. The reply carries it only when the key has a spend limit.
 */
export interface Headroom {
  daily?: number;
  monthly?: number;
  total?: number;
  balance?: number;
}

export type ReserveReply =
  | { kind: "ok"; nowMs: number; recordStored?: boolean; headroom?: Headroom }
  /** The windows are not the current ones by the limits' clock: recompute them at `nowMs`. */
  | { kind: "clock"; nowMs: number }
  | { kind: "rate"; retryAfterMs: number }
  /** Another caller is seeding a counter this request needs: try again shortly. */
  | { kind: "wait" }
  /** These counters are missing: the caller now holds their seeding marker (`token`). */
  | { kind: "seed"; nowMs: number; token: string; counters: CounterName[]; leases: LeaseRef[] }
  /** `headroomMicroUsd` (may be ≤ 0) is what the tightest failing check leaves. */
  | { kind: "limit"; counter: CounterName; headroomMicroUsd: number }
  /** The store's epoch is not the caller's (its memory was lost, or the caller is new): adopt it. */
  | { kind: "epoch" }
  /** A new epoch's recovery period: reservations of the lost one are still being re-published. */
  | { kind: "recovering"; retryAfterMs: number };

/** A reservation held by this instance, as it is published again into a new epoch. */
export interface HeldLease {
  requestId: string;
  keyId: string;
  amountMicroUsd: number;
}

export interface EpochReply {
  /** The store's current epoch (created now when it had none). */
  epoch: string;
  /** How long its recovery period lasts from now (≤ 0: over). */
  recoveringMs: number;
}

export interface LeaseRef {
  requestId: string;
  keyId: string;
}

export interface SeedInput {
  token: string;
  keyId: string;
  workspaceId: string;
  windows: LimitWindows;
  counters: Array<{
    name: CounterName;
    /** The value read from Postgres. */
    baseMicroUsd: number;
    /**
     * Leases known at marking time; `includedCostMicroUsd` is the cost Postgres' snapshot already
     * counts for that request in this counter (0 when it counts nothing).
     */
    adjustments: Array<{ requestId: string; includedCostMicroUsd: number }>;
  }>;
}

export interface SettleInput {
  requestId: string;
  keyId: string;
  workspaceId: string;
  /** The windows the request was admitted in (not today's, if it ran past midnight). */
  windows: LimitWindows;
  costMicroUsd: number;
}

export interface LimitCounters {
  readonly mode: "redis" | "in-process";
  reserve(input: ReserveInput): Promise<ReserveReply>;
  /** false when the marker was lost (expired, or the counter was dropped): reserve again. */
  finishSeed(input: SeedInput): Promise<boolean>;
  /**
   * Releases the lease and adds the cost to the counters. Without a lease (expired, or settled
   * already) nothing is added and the counters are marked stale instead, so they are re-seeded.
   */
  settle(input: SettleInput): Promise<"settled" | "no-lease">;
  /** Pushes the lease's deadline out; false when the lease is gone. */
  refresh(input: { requestId: string; workspaceId: string; leaseTtlMs: number }): Promise<boolean>;
  readReserved(
    workspaceId: string,
    keyId: string,
  ): Promise<{ keyMicroUsd: number; workspaceMicroUsd: number }>;
  /** Drops the balance counter (credit was added or removed): the next request re-seeds it. */
  forgetBalance(workspaceId: string): Promise<void>;
  /**
   * The store's epoch, created with `candidate` as its id when it has none. A new epoch opens a
   * recovery period of `recoveryMs` when the caller knew an earlier one (`known`; the store lost
   * its memory), and so does a caller that knew an earlier one joining an epoch younger than that.
   */
  checkEpoch(input: { known: string; candidate: string; recoveryMs: number }): Promise<EpochReply>;
  /**
   * Publishes leases of one workspace into `epoch` (each once: a lease already there is kept).
   * false when the store's epoch is another one by now.
   */
  republish(input: {
    epoch: string;
    workspaceId: string;
    leases: HeldLease[];
    leaseTtlMs: number;
  }): Promise<boolean>;
  /** The limits' clock, Unix milliseconds. */
  now(): Promise<number>;
  close(): Promise<void>;
}

/** Timing of the counters, shared by both implementations. */
export interface CounterTimings {
  /** A seeding marker left by a caller that died expires after this. */
  seedMarkerTtlMs: number;
  /** Spend counters are re-seeded from Postgres at least this often (heals any drift). */
  spendMaxAgeMs: number;
  /** The balance counter is re-seeded at least this often (credit added where no one told us). */
  balanceMaxAgeMs: number;
  /** A total-window counter unused this long is dropped. */
  totalIdleTtlMs: number;
  /** Day and month counters live this long past their window's end (late settlements). */
  windowGraceMs: number;
  /** The rate window. */
  rateWindowMs: number;
}

export const DEFAULT_COUNTER_TIMINGS: CounterTimings = {
  seedMarkerTtlMs: 5_000,
  spendMaxAgeMs: 60 * 60_000,
  balanceMaxAgeMs: 60_000,
  totalIdleTtlMs: 7 * 24 * 60 * 60_000,
  windowGraceMs: 60 * 60_000,
  rateWindowMs: 60_000,
};

/** Redis key names (before the SharedState prefix); exported so tests can inspect the counters. */
export const LIMIT_KEYS = {
  rate: (keyId: string) => `limits:rpm:${keyId}`,
  leases: (workspaceId: string) => `limits:ws:${workspaceId}:leases`,
  deadlines: (workspaceId: string) => `limits:ws:${workspaceId}:deadlines`,
  reserved: (workspaceId: string) => `limits:ws:${workspaceId}:reserved`,
  stale: (workspaceId: string) => `limits:ws:${workspaceId}:stale`,
  balance: (workspaceId: string) => `limits:ws:${workspaceId}:balance`,
  spend: (keyId: string, windowId: string) => `limits:key:${keyId}:${windowId}`,
  epoch: () => "limits:epoch",
};
