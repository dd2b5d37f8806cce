/**
 * The spend guard of either runtime mode: Lua scripts on Redis when a URL is given
 * (every instance shares the counters), else in-process counters (embedded mode, one instance).
 */

import { BALANCE_CHANGED_CHANNEL, decodeBalanceChange } from "../auth/balance-channel.js";
import type { KeyLimitRepository } from "../limits/ports.js";
import { createSpendGuard, type SettleObserver, type SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import { createInProcessLimitCounters } from "./shared-state/in-process-limit-counters.js";
import { createRedisLimitCounters } from "./shared-state/redis-limit-counters.js";
import type { SharedState } from "./store.js";

export interface OpenSpendGuardOptions {
  keyLimits: KeyLimitRepository;
  redisUrl?: string;
  /** The SharedState prefix, so limit keys live beside the gateway's other Redis keys. */
  prefix?: string;
  leaseTtlMs: number;
  /** How long a lease is refreshed at most: past the longest request (default: an hour). */
  maxLeaseLifetimeMs?: number;
  /** Redis only: no admission against a limit for this long after it lost its memory. */
  recoveryMs?: number;
  logger?: Logger;
  /** Where credit changes are announced (balance-channel.ts); absent: only direct calls. */
  state?: SharedState;
  /** Told of each request's settlement with its cost (budget alerts). */
  onSettled?: SettleObserver;
}

/** Connection errors repeat on every reconnect attempt; one line per this interval is enough. */
const ERROR_LOG_INTERVAL_MS = 30_000;
/**
 * How often each instance asks Redis whether it lost its memory, also while it admits nothing
 * (its requests in flight still hold reservations). Part of the recovery period's bound.
 */
const EPOCH_CHECK_INTERVAL_MS = 1_000;

export async function openSpendGuard(options: OpenSpendGuardOptions): Promise<SpendGuard> {
  const guard = await openGuard(options);
  if (!options.state) return guard;
  const unsubscribe = await options.state.subscribe(BALANCE_CHANGED_CHANNEL, (message) => {
    const workspaceId = decodeBalanceChange(message);
    if (workspaceId !== undefined) void guard.forgetBalance(workspaceId);
  });
  return Object.assign({}, guard, {
    async close() {
      await unsubscribe().catch(() => {});
      await guard.close();
    },
  });
}

async function openGuard(options: OpenSpendGuardOptions): Promise<SpendGuard> {
  if (!options.redisUrl) {
    return createSpendGuard({
      counters: createInProcessLimitCounters(),
      keyLimits: options.keyLimits,
      logger: options.logger,
      leaseTtlMs: options.leaseTtlMs,
      maxLeaseLifetimeMs: options.maxLeaseLifetimeMs,
      onSettled: options.onSettled,
    });
  }
  let lastLoggedAt = 0;
  // Loaded only here: an embedded gateway never needs ioredis.
  const { openRedisScriptRunner } = await import("./shared-state/redis-script-runner.js");
  const runner = await openRedisScriptRunner({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    onError: (error) => {
      if (Date.now() - lastLoggedAt < ERROR_LOG_INTERVAL_MS) return;
      lastLoggedAt = Date.now();
      options.logger?.warn({ err: error }, "limit store (Redis) connection error");
    },
  });
  return createSpendGuard({
    counters: createRedisLimitCounters(runner),
    keyLimits: options.keyLimits,
    logger: options.logger,
    leaseTtlMs: options.leaseTtlMs,
    maxLeaseLifetimeMs: options.maxLeaseLifetimeMs,
    recoveryMs: options.recoveryMs,
    epochCheckIntervalMs: EPOCH_CHECK_INTERVAL_MS,
    onSettled: options.onSettled,
  });
}
