/**
 * Each instance's circuit-breaker states, published for the admin API's providers page. Breakers
 * are per instance (circuit-breaker.ts), so in distributed mode every instance writes its own
 * report into shared state now and then, with a time to live of one instance lease: a report
 * outlives its instance by at most that, like the lease (dead-instance-sweep.ts). Embedded mode
 * runs the same loop over in-process state and so lists its one instance.
 */
import type { Logger } from "../logging/logger.js";
import type { RouteBreakerState } from "./generation-engine.js";

export interface BreakerReport {
  instanceId: string;
  /** Date.now() of the instance when it wrote the report. */
  reportedAt: number;
  routes: RouteBreakerState[];
}

/** Where instances leave their reports (storage/shared-state/breaker-report-store.ts). */
export interface BreakerReportStore {
  publish(report: BreakerReport, ttlMs: number): Promise<void>;
  /** The reports not yet expired, any order. */
  list(): Promise<BreakerReport[]>;
  remove(instanceId: string): Promise<void>;
}

export interface BreakerReporter {
  /** This instance's states now (not the published copy). */
  current(): BreakerReport;
  /** Writes the report at once (tests, and the first one at start). */
  publishNow(): Promise<void>;
  /** Stops publishing and removes this instance's report. */
  stop(): Promise<void>;
}

/** Reports per lease time: a report is never older than a sixth of a lease, like a renewal. */
const REPORTS_PER_LEASE = 6;

export function startBreakerReporter(deps: {
  instanceId: string;
  store: BreakerReportStore;
  readStates: () => RouteBreakerState[];
  leaseMs: number;
  logger: Logger;
}): BreakerReporter {
  const current = (): BreakerReport => ({
    instanceId: deps.instanceId,
    reportedAt: Date.now(),
    routes: deps.readStates(),
  });
  let stopped = false;
  const publishNow = async () => {
    if (stopped) return;
    try {
      await deps.store.publish(current(), deps.leaseMs);
    } catch (error) {
      deps.logger.warn({ err: error }, "circuit-breaker report not published");
    }
  };
  const timer = setInterval(
    () => void publishNow(),
    Math.max(250, Math.round(deps.leaseMs / REPORTS_PER_LEASE)),
  );
  timer.unref();
  void publishNow();
  return {
    current,
    publishNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await deps.store.remove(deps.instanceId).catch(() => {});
    },
  };
}
