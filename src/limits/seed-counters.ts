/**
 * Seeding a counter from Postgres while requests are in flight, exactly. Postgres is written first
 * (generation finished, balance debited, in one transaction) and the counters second, so at any
 * moment some costs are in Postgres but not yet in Redis. The protocol:
 *
 * 1. The reserve step marks the missing counters as "being seeded" and returns every lease of the
 *    workspace. From then on, nobody using those counters is admitted, and a settlement arriving
 *    for a marked counter is parked in the counter as pending instead of added.
 * 2. One Postgres statement reads the window sums, the balance, and which of those leased
 *    requests are already final there, with their cost and admission time.
 * 3. The finish step sets each counter to the Postgres value, then for every listed lease: if it is
 *    still held, its settlement here is still to come, so a cost Postgres already counts is taken
 *    out again; if it is gone and was settled during the seed (pending) while Postgres' snapshot
 *    did not count it, it is added.
 *
 * A lease that vanished without a settlement (expired) marks the counters stale, which seeds them
 * again; no cost is ever counted twice or lost.
 */

import type { CounterName, LeaseRef, SeedInput } from "./limit-counters.js";
import type { LimitWindows } from "./limit-windows.js";
import type { KeyLimitRepository } from "./ports.js";

export async function readSeedInput(
  keyLimits: KeyLimitRepository,
  request: {
    token: string;
    keyId: string;
    workspaceId: string;
    windows: LimitWindows;
    counters: CounterName[];
    leases: LeaseRef[];
  },
): Promise<SeedInput> {
  const { windows, keyId } = request;
  const spendWindows = request.counters.filter((name) => name !== "balance") as Array<
    Exclude<CounterName, "balance">
  >;
  const snapshot = await keyLimits.readSeedSnapshot({
    keyId,
    workspaceId: request.workspaceId,
    windows: Object.fromEntries(
      spendWindows.map((name) => [
        name,
        {
          since: new Date(windows[name].startMs),
          until: windows[name].endMs === null ? null : new Date(windows[name].endMs),
        },
      ]),
    ),
    generationIds: request.leases.map((lease) => lease.requestId),
  });
  const finished = new Map(snapshot.finished.map((entry) => [entry.id, entry]));

  return {
    token: request.token,
    keyId,
    workspaceId: request.workspaceId,
    windows,
    counters: request.counters.map((name) => {
      if (name === "balance") {
        return {
          name,
          baseMicroUsd: snapshot.balanceMicroUsd,
          // Finishing a generation debits the balance in the same transaction.
          adjustments: request.leases.map((lease) => ({
            requestId: lease.requestId,
            includedCostMicroUsd: finished.get(lease.requestId)?.costMicroUsd ?? 0,
          })),
        };
      }
      const window = windows[name];
      return {
        name,
        baseMicroUsd: snapshot.spendMicroUsd[name] ?? 0,
        adjustments: request.leases
          .filter((lease) => lease.keyId === keyId)
          .map((lease) => {
            const entry = finished.get(lease.requestId);
            const at = entry?.createdAt.getTime();
            const inWindow =
              at !== undefined && at >= window.startMs && (window.endMs === null || at < window.endMs);
            return { requestId: lease.requestId, includedCostMicroUsd: inWindow ? entry!.costMicroUsd : 0 };
          }),
      };
    }),
  };
}
