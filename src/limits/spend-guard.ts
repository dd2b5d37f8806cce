/**
 * Admission-time spend and rate limits. `admit` reserves a request's
 * worst-case cost against the key's daily, monthly and total limits and the workspace balance, and
 * takes a slot of the key's rate window, in one atomic step of the limit counters (Redis: shared by
 * every instance; in-process: embedded mode). The returned reservation is held under a lease that
 * is refreshed while the request runs, and `settle` replaces it with the actual cost (0 releases
 * it). Counters are caches of Postgres, seeded from it exactly (seed-counters.ts).
 *
 * Redis unreachable: a request that needs no limit (no key limits, no rate limit, invoicing) is
 * admitted without a reservation; every other request is refused with `rate_limit_exceeded` and
 * Retry-After, so spend can never run past a limit while the shared counters are out of sight.
 * Redis back without its memory: the reservations this instance holds are published again before
 * it admits, and nothing is admitted against a limit while every instance does so (held-leases.ts).
 */
import type { Logger } from "../logging/logger.js";
import { HeldLeases } from "./held-leases.js";
import type { AdmissionRecord, CounterName, Headroom, LimitCounters, SettleInput } from "./limit-counters.js";
import {
  createInsufficientCreditsError,
  createKeyLimitError,
  createLimitStoreRecoveringError,
  createLimitStoreUnavailableError,
  createRateLimitError,
} from "./limit-errors.js";
import { computeLimitWindows, type LimitWindows } from "./limit-windows.js";
import type { KeyLimitRepository, KeyLimits } from "./ports.js";
import { readSeedInput } from "./seed-counters.js";
import { createSettleRetryQueue } from "./settle-retry-queue.js";
import { computeAffordableOutputCap, computeReservation, type WorstCase } from "./worst-case-cost.js";

export interface AdmissionInput {
  requestId: string;
  keyId: string;
  workspaceId: string;
  limits: KeyLimits;
  /** The key's own value or the config default; null: no rate limit. */
  requestsPerMinute: number | null;
  /** false for invoicing workspaces (their balance may go below zero). */
  checkBalance: boolean;
  worstCase: WorstCase;
  /**
   * true when the caller set no output cap (the model's maximum stands in): it may then be lowered
   * to what the headroom affords instead of refusing the request.
   */
  outputCapAdjustable: boolean;
  /** Stored with the reservation when it is admitted (limit-counters.ts); see `recordStored`. */
  record?: AdmissionRecord;
}

export interface Reservation {
  /** Admission time on the limits' clock (Unix ms): the generation's created_at. */
  readonly admittedAt: number;
  /** What is held in all: the admission's amount plus every extension granted since. */
  readonly amountMicroUsd: number;
  /** The output cap to send upstream (lowered when `outputCapLowered`). */
  readonly outputCap: number;
  readonly outputCapLowered: boolean;
  /** The admission's `record` was stored with it (false without one, or when Redis was out of reach). */
  readonly recordStored: boolean;
  /**
   * What the key's limits (and the balance, unless invoicing) leave once this reservation is held,
   * read in the admission's own step (limit-counters.ts); absent for a key without a spend limit.
   * Extensions granted later do not change it.
   */
  readonly headroom?: Headroom;
  /**
   * Holds `amountMicroUsd` more against the same limits and balance (a run that needs another
   * upstream round or a paid tool call). Resolves false when the headroom cannot cover it (nothing
   * more is then held); throws only when the limit store cannot be reached. No rate-limit slot is
   * taken: the request was admitted once.
   */
  extend(amountMicroUsd: number): Promise<boolean>;
  /**
   * Replaces the reservation (with its extensions) by the actual cost (0: release). Idempotent;
   * never throws.
   */
  settle(costMicroUsd: number): Promise<void>;
}

export interface OrphanSettlement {
  requestId: string;
  keyId: string;
  workspaceId: string;
  /** The record's created_at: the admission time, which decides its windows. */
  admittedAt: Date;
  costMicroUsd: number;
}

export interface SpendGuard {
  readonly mode: LimitCounters["mode"];
  /** Throws key_limit_exceeded, insufficient_credits or rate_limit_exceeded (GatewayError). */
  admit(input: AdmissionInput): Promise<Reservation>;
  /** In-flight reservations; null when the limit store cannot be reached. */
  readReserved(
    workspaceId: string,
    keyId: string,
  ): Promise<{ keyMicroUsd: number; workspaceMicroUsd: number } | null>;
  /** The limits' clock (Unix ms); the process clock when the store cannot be reached. */
  now(): Promise<number>;
  /** After a credit change: the balance counter is re-seeded. Best effort (it expires anyway). */
  forgetBalance(workspaceId: string): Promise<void>;
  /**
   * Settles the reservation of a request whose instance died (its record was settled as
   * interrupted, in Postgres first): the lease, if it still exists, is replaced by `costMicroUsd`;
   * if it expired, the counters are re-seeded from Postgres instead. Never throws.
   */
  settleOrphan(input: OrphanSettlement): Promise<void>;
  close(): Promise<void>;
}

/** Whose spend a settlement is: enough to check the key's budget alerts. */
export type SettledKey = Pick<AdmissionInput, "requestId" | "keyId" | "workspaceId" | "limits">;

/**
 * Told of every settled reservation with its cost (budget alerts, src/alerts/), after the cost is
 * in the counters, and of every orphan settled by the crash sweep (`settleOrphan`). Must return at
 * once and never throw; the settlement does not wait for it.
 */
export type SettleObserver = (key: SettledKey, admittedAt: number, costMicroUsd: number) => void;

export interface SpendGuardOptions {
  counters: LimitCounters;
  /** Told of each request's settlement (not of its extensions'). */
  onSettled?: SettleObserver;
  keyLimits: KeyLimitRepository;
  logger?: Logger;
  /** How long a reservation survives without a refresh (its instance crashed). */
  leaseTtlMs: number;
  /** Leases stop being refreshed after this (a request that never settles cannot hold one forever). */
  maxLeaseLifetimeMs?: number;
  /** The longest admission may spend waiting for counters being seeded elsewhere. */
  admissionDeadlineMs?: number;
  /**
   * After the limit store lost its memory, how long nothing is admitted against a limit while every
   * instance publishes its reservations in flight again (held-leases.ts). Default 5 s.
   */
  recoveryMs?: number;
  /** How often the store's epoch is checked while nothing is admitted; 0: never. Default 0. */
  epochCheckIntervalMs?: number;
}

/** A lowered output cap below this is no useful answer: refuse instead. */
export const MIN_LOWERED_OUTPUT_TOKENS = 64;
const DEFAULT_MAX_LEASE_LIFETIME_MS = 60 * 60_000;
const DEFAULT_ADMISSION_DEADLINE_MS = 3_000;
export const DEFAULT_RECOVERY_MS = 5_000;
const MAX_ATTEMPTS = 60;

export function createSpendGuard(options: SpendGuardOptions): SpendGuard {
  const { counters, keyLimits, leaseTtlMs } = options;
  const maxLeaseLifetimeMs = options.maxLeaseLifetimeMs ?? DEFAULT_MAX_LEASE_LIFETIME_MS;
  const admissionDeadlineMs = options.admissionDeadlineMs ?? DEFAULT_ADMISSION_DEADLINE_MS;
  const retries = createSettleRetryQueue({
    settle: (input) => counters.settle(input),
    maxAgeMs: leaseTtlMs * 2,
    onGiveUp: (input, reason) =>
      options.logger?.warn(
        { requestId: input.requestId, costMicroUsd: input.costMicroUsd, reason },
        "limit settlement dropped; counters are re-seeded from Postgres",
      ),
  });

  const held = new HeldLeases({
    counters,
    leaseTtlMs,
    recoveryMs: options.recoveryMs ?? DEFAULT_RECOVERY_MS,
    checkIntervalMs: options.epochCheckIntervalMs ?? 0,
    logger: options.logger,
  });

  /** What every reservation of this guard shares (one object, not one per request). */
  const leases: LeaseServices = {
    counters,
    retries,
    held,
    leaseTtlMs,
    maxLeaseLifetimeMs,
    extend: extendReservation,
    onSettled: options.onSettled,
  };
  // An extension's settlement is part of its request's, which the observer is told of once.
  const extensionLeases: LeaseServices = Object.assign({}, leases, { onSettled: undefined });
  const extensionInputs = new WeakSet<AdmissionInput>();

  function holdLease(
    input: AdmissionInput,
    windows: LimitWindows,
    admittedAt: number,
    amount: number,
    cap: number,
    lowered: boolean,
    epoch: string,
    recordStored: boolean,
    headroom: Headroom | undefined,
  ): Reservation {
    held.add(
      input.workspaceId,
      { requestId: input.requestId, keyId: input.keyId, amountMicroUsd: amount },
      epoch,
    );
    const services = extensionInputs.has(input) ? extensionLeases : leases;
    return new LeasedReservation(
      services,
      input,
      windows,
      admittedAt,
      amount,
      cap,
      lowered,
      recordStored,
      headroom,
    );
  }

  /**
   * One extension of a reservation: a reservation of its own under a derived request id
   * (`<id>~<n>`), admitted like the first (same limits, balance and clock handling, no rate slot),
   * and released with cost 0 once the request's whole cost is settled on its first lease. Its
   * lease lapses by itself if this instance dies, like any other. Undefined when a limit refuses.
   */
  async function extendReservation(
    input: AdmissionInput,
    more: number,
    count: number,
  ): Promise<Reservation | undefined> {
    try {
      // The admission's own input, with what differs for an extension (objects this module built).
      const extension: AdmissionInput = Object.assign({}, input, {
        requestId: `${input.requestId}~${count}`,
        requestsPerMinute: null,
        outputCapAdjustable: false,
        // The request's record was stored with its first reservation.
        record: undefined,
        worstCase: Object.assign({}, input.worstCase, { amountMicroUsd: more }),
      });
      extensionInputs.add(extension);
      return await guard.admit(extension);
    } catch (error) {
      if (isLimitRefusal(error)) return undefined;
      throw error;
    }
  }

  /** Redis unreachable and nothing to enforce: admitted, its cost reaches the counters if it can. */
  function detach(input: AdmissionInput): Reservation {
    const admittedAt = Date.now();
    const windows = computeLimitWindows(admittedAt, input.limits.totalResetAt);
    let settled: Promise<void> | undefined;
    let amount = input.worstCase.amountMicroUsd;
    return {
      admittedAt,
      get amountMicroUsd() {
        return amount;
      },
      outputCap: input.worstCase.outputCap,
      outputCapLowered: false,
      recordStored: false,
      // Nothing is enforced for this request (see `enforcesNothing`), so any extension is granted.
      async extend(more) {
        amount += Math.max(0, more);
        return true;
      },
      settle(costMicroUsd) {
        // No lease: the settle step marks the counters stale, so they are re-seeded with this cost.
        settled ??= counters
          .settle({
            requestId: input.requestId,
            keyId: input.keyId,
            workspaceId: input.workspaceId,
            windows,
            costMicroUsd,
          })
          .then(() => {})
          .catch(() => {});
        return settled;
      },
    };
  }

  function enforcesNothing(input: AdmissionInput): boolean {
    const { limits } = input;
    return (
      !input.checkBalance &&
      input.requestsPerMinute === null &&
      limits.dailyMicroUsd === null &&
      limits.monthlyMicroUsd === null &&
      limits.totalMicroUsd === null
    );
  }

  const guard: SpendGuard = {
    mode: counters.mode,

    async admit(input) {
      const { worstCase, limits } = input;
      const deadline = Date.now() + admissionDeadlineMs;
      let clockHint = Date.now();
      let cap = worstCase.outputCap;
      let amount = worstCase.amountMicroUsd;
      let lowered = false;
      let pauseMs = 5;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const windows = computeLimitWindows(clockHint, limits.totalResetAt);
        const epoch = held.epoch;
        let reply: Awaited<ReturnType<LimitCounters["reserve"]>>;
        try {
          reply = await counters.reserve({
            requestId: input.requestId,
            keyId: input.keyId,
            workspaceId: input.workspaceId,
            amountMicroUsd: amount,
            limits: {
              daily: limits.dailyMicroUsd,
              monthly: limits.monthlyMicroUsd,
              total: limits.totalMicroUsd,
            },
            checkBalance: input.checkBalance,
            requestsPerMinute: input.requestsPerMinute,
            windows,
            leaseTtlMs,
            epoch,
            record: input.record,
          });
        } catch (error) {
          if (enforcesNothing(input)) return detach(input);
          options.logger?.warn({ err: error, requestId: input.requestId }, "limit store unreachable");
          throw createLimitStoreUnavailableError(error);
        }
        switch (reply.kind) {
          case "ok":
            return holdLease(
              input,
              windows,
              reply.nowMs,
              amount,
              cap,
              lowered,
              epoch,
              reply.recordStored === true,
              reply.headroom,
            );
          case "epoch":
            // This instance's reservations go into the store's new epoch before it admits again.
            try {
              await held.adopt();
            } catch (error) {
              if (enforcesNothing(input)) return detach(input);
              throw createLimitStoreUnavailableError(error);
            }
            continue;
          case "recovering":
            if (Date.now() + reply.retryAfterMs > deadline)
              throw createLimitStoreRecoveringError(reply.retryAfterMs);
            await sleep(reply.retryAfterMs + Math.random() * 50);
            continue;
          case "clock":
            clockHint = reply.nowMs;
            continue;
          case "rate":
            throw createRateLimitError(input.requestsPerMinute ?? 0, reply.retryAfterMs);
          case "wait":
            if (Date.now() + pauseMs > deadline)
              throw createLimitStoreUnavailableError("seeding took too long");
            await sleep(pauseMs + Math.random() * pauseMs);
            pauseMs = Math.min(pauseMs * 2, 80);
            continue;
          case "seed": {
            // Everyone else needing these counters waits for this read: it gets the admission's
            // deadline, not the database's longer statement timeout.
            const seed = await raceDeadline(
              readSeedInput(keyLimits, {
                token: reply.token,
                keyId: input.keyId,
                workspaceId: input.workspaceId,
                windows,
                counters: reply.counters,
                leases: reply.leases,
              }),
              Math.max(100, deadline - Date.now()),
            );
            try {
              await counters.finishSeed(seed);
            } catch (error) {
              throw createLimitStoreUnavailableError(error);
            }
            continue;
          }
          case "limit": {
            if (!lowered && input.outputCapAdjustable) {
              const affordable = computeAffordableOutputCap(worstCase, reply.headroomMicroUsd);
              if (affordable >= Math.min(MIN_LOWERED_OUTPUT_TOKENS, worstCase.outputCap)) {
                // A shorter answer rather than a refusal when the caller set no cap.
                cap = affordable;
                amount = computeReservation(worstCase, cap);
                lowered = true;
                continue;
              }
            }
            throw createLimitError(reply.counter, reply.headroomMicroUsd, amount, limits, windows);
          }
        }
      }
      throw createLimitStoreUnavailableError("too many attempts");
    },

    async readReserved(workspaceId, keyId) {
      try {
        return await counters.readReserved(workspaceId, keyId);
      } catch {
        return null;
      }
    },

    async now() {
      try {
        return await counters.now();
      } catch {
        return Date.now();
      }
    },

    async forgetBalance(workspaceId) {
      try {
        await counters.forgetBalance(workspaceId);
      } catch (error) {
        options.logger?.warn(
          { err: error, workspaceId },
          "could not drop the balance counter; it expires soon",
        );
      }
    },

    async settleOrphan(input) {
      let limits: KeyLimits | null = null;
      try {
        limits = await keyLimits.get(input.keyId);
      } catch {
        // Without the reset time the total window may be the wrong one: the settle below then
        // finds no lease there and marks the counters for re-seeding, which is exact anyway.
      }
      const totalResetAt = limits?.totalResetAt ?? null;
      const settlement: SettleInput = {
        requestId: input.requestId,
        keyId: input.keyId,
        workspaceId: input.workspaceId,
        windows: computeLimitWindows(input.admittedAt.getTime(), totalResetAt),
        costMicroUsd: input.costMicroUsd,
      };
      try {
        await counters.settle(settlement);
      } catch {
        retries.add(settlement);
      }
      // Its cost counts toward the key's windows like any other (budget alerts); the limits are
      // today's, as an alert check after any settlement reads them. Without them (the key is gone
      // or the read failed) there is nothing to check against.
      if (limits === null) return;
      try {
        options.onSettled?.(
          { requestId: input.requestId, keyId: input.keyId, workspaceId: input.workspaceId, limits },
          input.admittedAt.getTime(),
          input.costMicroUsd,
        );
      } catch {
        // The observer's failures are its own; a settlement never throws.
      }
    },

    async close() {
      held.close();
      await retries.close();
      await counters.close();
    },
  };
  return guard;
}

/** The refusals of a limit (spend, balance): an extension that meets one is simply not granted. */
function isLimitRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "key_limit_exceeded" || code === "insufficient_credits";
}

function createLimitError(
  counter: CounterName,
  headroomMicroUsd: number,
  amountMicroUsd: number,
  limits: KeyLimits,
  windows: LimitWindows,
) {
  if (counter === "balance") return createInsufficientCreditsError(headroomMicroUsd, amountMicroUsd);
  const limitMicroUsd =
    counter === "daily"
      ? limits.dailyMicroUsd
      : counter === "monthly"
        ? limits.monthlyMicroUsd
        : limits.totalMicroUsd;
  return createKeyLimitError({
    counter,
    limitMicroUsd: limitMicroUsd ?? 0,
    headroomMicroUsd,
    amountMicroUsd,
    windows,
  });
}

/** Rejects with the limit store's retryable error when `promise` takes longer than `milliseconds`. */
function raceDeadline<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(createLimitStoreUnavailableError(`seeding the counters took over ${milliseconds} ms`)),
      milliseconds,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

interface LeaseServices {
  counters: LimitCounters;
  retries: { add(input: SettleInput): void };
  held: HeldLeases;
  leaseTtlMs: number;
  maxLeaseLifetimeMs: number;
  /** Admits the `count`-th extension of `more` to `input`'s reservation; undefined when a limit refuses it. */
  extend(input: AdmissionInput, more: number, count: number): Promise<Reservation | undefined>;
  onSettled?: SettleObserver;
}

/**
 * An admitted reservation, held under a lease refreshed while the request runs. A class, not an
 * object literal with a getter: one is made per request, and a literal with accessors takes the
 * engine's slow path.
 */
class LeasedReservation implements Reservation {
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = Date.now();
  /** The extensions granted so far (made only when the run asks for one). */
  private extensions: Reservation[] | undefined;
  private extendedMicroUsd = 0;
  private settled: Promise<void> | undefined;

  constructor(
    private readonly services: LeaseServices,
    private readonly input: AdmissionInput,
    private readonly windows: LimitWindows,
    readonly admittedAt: number,
    private readonly amount: number,
    readonly outputCap: number,
    readonly outputCapLowered: boolean,
    readonly recordStored: boolean,
    readonly headroom: Headroom | undefined,
  ) {
    this.timer = setInterval(() => this.refresh(), Math.max(1_000, Math.floor(services.leaseTtlMs / 3)));
    this.timer.unref();
  }

  get amountMicroUsd(): number {
    return this.amount + this.extendedMicroUsd;
  }

  async extend(more: number): Promise<boolean> {
    if (more <= 0) return true;
    this.extensions ??= [];
    const extension = await this.services.extend(this.input, more, this.extensions.length + 1);
    if (extension === undefined) return false;
    this.extensions.push(extension);
    this.extendedMicroUsd += more;
    return true;
  }

  settle(costMicroUsd: number): Promise<void> {
    this.settled ??= this.settleOnce(costMicroUsd);
    return this.settled;
  }

  private refresh(): void {
    const { counters, leaseTtlMs, maxLeaseLifetimeMs } = this.services;
    if (Date.now() - this.startedAt > maxLeaseLifetimeMs) {
      clearInterval(this.timer);
      this.services.held.remove(this.input.requestId);
      return;
    }
    counters
      .refresh({ requestId: this.input.requestId, workspaceId: this.input.workspaceId, leaseTtlMs })
      .catch(() => {}); // The next refresh tries again; an expired lease only re-seeds counters.
  }

  private async settleOnce(costMicroUsd: number): Promise<void> {
    clearInterval(this.timer);
    const { held } = this.services;
    held.remove(this.input.requestId);
    // A re-publish that listed this lease lands first, so the settlement below finds and releases it.
    await held.settled();
    const settlement: SettleInput = {
      requestId: this.input.requestId,
      keyId: this.input.keyId,
      workspaceId: this.input.workspaceId,
      windows: this.windows,
      costMicroUsd,
    };
    try {
      await this.services.counters.settle(settlement);
    } catch {
      this.services.retries.add(settlement);
    }
    // After the cost landed, never before: the extensions keep holding until it counts.
    if (this.extensions !== undefined) {
      await Promise.all(this.extensions.map((extension) => extension.settle(0)));
    }
    try {
      this.services.onSettled?.(this.input, this.admittedAt, costMicroUsd);
    } catch {
      // The observer's failures are its own; a settlement never throws.
    }
  }
}
