/**
 * Settles the requests of an instance that died, within about `limits.instance_lease_seconds`
 * (default 60) whatever `limits.max_request_seconds` is (docs/durability.md, "Requests a crashed
 * instance left open"). Distributed mode only: every instance renews a lease in Redis (a
 * heartbeat), and every in-progress record carries its instance's id and is listed in that
 * instance's own index. An instance whose lease has not been renewed for the lease time is dead;
 * any other instance settles its records as `interrupted` (the prompt admission estimated, no
 * output; the reservation released with that cost), then unlists it.
 *
 * Silence only means death if the store could be reached meanwhile: an observer judges another
 * instance by the time since its last renewal or since the observer itself has been in unbroken
 * contact with the store, whichever is shorter. So after a Redis outage, or a Redis that lost its
 * memory (its leases with it), nobody is taken for dead until every live instance has had a whole
 * lease time to renew. An instance cut off from Redis alone for longer than that is taken for dead
 * like a crashed one (as its reservations already are, docs/limits.md).
 */
import type { InterruptedSweepDeps } from "./interrupted-sweep.js";
import { settleListed } from "./interrupted-sweep.js";
import type { InstanceLeases } from "./ports.js";

export interface DeadInstanceSweepDeps extends InterruptedSweepDeps {
  instanceId: string;
  leases: InstanceLeases;
}

export interface DeadInstanceSweep {
  /** One sweep now (waits for one in progress first); resolves with how many records it settled. */
  runNow(): Promise<number>;
  /** Stops renewing and sweeping, and unlists this instance (its requests are over by then). */
  stop(): Promise<void>;
}

/** Renewals per lease time: a few missed ones (a slow store, a busy event loop) are no death. */
const RENEWALS_PER_LEASE = 6;
/** Sweeps per lease time, at most this far apart. */
const SWEEPS_PER_LEASE = 4;
const MAX_SWEEP_INTERVAL_MS = 15_000;

export function startDeadInstanceSweep(deps: DeadInstanceSweepDeps): DeadInstanceSweep {
  const leaseMs = deps.config.instanceLeaseMs;
  const renewMs = Math.max(250, Math.round(leaseMs / RENEWALS_PER_LEASE));
  const sweepMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(500, Math.round(leaseMs / SWEEPS_PER_LEASE)));
  /** Since when (store clock) this instance has been in unbroken contact with the store. */
  let contactSince: number | undefined;
  let lastRenewedAt = 0;
  let running: Promise<number> | undefined;
  let stopped = false;

  async function renew(): Promise<number | undefined> {
    try {
      const { nowMs, wasListed } = await deps.leases.renew(deps.instanceId);
      // A renewal that comes late (the store or this event loop stalled) breaks the contact too.
      const late = Date.now() - lastRenewedAt > 2 * renewMs + 1_000;
      if (!wasListed && lastRenewedAt > 0) {
        deps.logger.warn(
          { instanceId: deps.instanceId },
          "this instance's lease was gone: Redis lost its memory, or the other instances took this one for dead and settled its requests",
        );
      }
      if (contactSince === undefined || !wasListed || late) contactSince = nowMs;
      lastRenewedAt = Date.now();
      return nowMs;
    } catch (error) {
      contactSince = undefined;
      deps.logger.warn({ err: error }, "instance lease not renewed");
      return undefined;
    }
  }

  async function sweepOnce(): Promise<number> {
    const nowMs = await renew();
    if (nowMs === undefined || contactSince === undefined) return 0;
    const list = deps.store.generations.listInProgressOf?.bind(deps.store.generations);
    if (list === undefined) return 0;
    let settled = 0;
    for (const { instanceId, renewedAt } of await deps.leases.list()) {
      if (instanceId === deps.instanceId || nowMs - Math.max(renewedAt, contactSince) < leaseMs) continue;
      const result = await settleListed(deps, (limit) => list(instanceId, limit));
      settled += result.settled;
      if (result.settled > 0)
        deps.logger.warn(
          { instanceId, settled: result.settled },
          "settled requests of an instance whose lease expired",
        );
      if (result.exhausted) await deps.leases.forget(instanceId);
    }
    return settled;
  }

  function runNow(): Promise<number> {
    const next = (running ?? Promise.resolve(0)).catch(() => 0).then(sweepOnce);
    running = next;
    return next.finally(() => {
      if (running === next) running = undefined;
    });
  }

  // Also while a sweep runs: a long one must not let this instance's own lease lapse.
  const renewal = setInterval(() => void renew(), renewMs);
  renewal.unref();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    // Instances spread their sweeps out instead of running them together.
    timer = setTimeout(
      () => {
        runNow()
          .catch((error: unknown) => deps.logger.warn({ err: error }, "sweep of dead instances failed"))
          .finally(schedule);
      },
      sweepMs * (0.75 + Math.random() / 2),
    );
    timer.unref();
  };
  void renew().finally(schedule);

  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(renewal);
      clearTimeout(timer);
      await running?.catch(() => {});
      await deps.leases.forget(deps.instanceId).catch(() => {});
    },
  };
}
