/**
 * The reservations this instance holds, and the epoch of the limit store they are published in.
 * Redis that comes back without its memory (restarted without persistence, flushed) has lost every
 * lease while the requests behind them still run; counters seeded from Postgres then see only
 * settled spend, and the headroom those requests held would be granted again. So:
 *
 * - every reservation admitted here is kept in this table until its settlement starts;
 * - the store carries an epoch (limit-counters.ts). A reserve published under another epoch is
 *   refused with `epoch`, and a watcher asks for the epoch every second even when nothing is
 *   admitted; either way this instance then publishes every reservation it holds into the new
 *   epoch (`adopt`) before it admits again;
 * - a new epoch created by an instance that knew the old one recovers for `recoveryMs`: nothing is
 *   admitted against a limit until every instance that can reach the store had time to notice and
 *   re-publish. The counters seeded afterwards see the re-published leases like any other.
 *
 * Settlements wait for a re-publish in progress (`settled`), so a lease is never published again
 * after its request settled: its settlement finds it and releases it.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../logging/logger.js";
import type { HeldLease, LimitCounters } from "./limit-counters.js";

export interface HeldLeasesOptions {
  counters: LimitCounters;
  leaseTtlMs: number;
  /** How long a new epoch admits nothing against a limit after the store lost its memory. */
  recoveryMs: number;
  /** How often the epoch is checked while nothing is admitted; 0: never (one process, no store). */
  checkIntervalMs: number;
  logger?: Logger;
}

interface HeldEntry {
  workspaceId: string;
  lease: HeldLease;
  /** The epoch it is known to be published in. */
  epoch: string;
}

/** Leases per republish call: one script call each, bounded in size. */
const REPUBLISH_BATCH = 200;
/** A store whose epoch keeps changing under a re-publish is given up on after this many rounds. */
const MAX_ADOPT_ROUNDS = 5;

export class HeldLeases {
  private readonly held = new Map<string, HeldEntry>();
  private known = "";
  private adopting: Promise<void> | undefined;
  /** Set from the moment held leases are listed for a re-publish until it is done. */
  private publishing: Promise<boolean> | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: HeldLeasesOptions) {
    if (options.checkIntervalMs > 0) {
      // Learnt at once, so the first admissions do not each meet `epoch` first.
      this.adopt().catch(() => {}); // Unreachable: the next check tries again.
      this.timer = setInterval(() => {
        this.adopt().catch(() => {});
      }, options.checkIntervalMs);
      this.timer.unref();
    }
  }

  /** The epoch reservations are published in; '' until the first check. */
  get epoch(): string {
    return this.known;
  }

  /** A reservation admitted under `epoch`. */
  add(workspaceId: string, lease: HeldLease, epoch: string): void {
    this.held.set(lease.requestId, { workspaceId, lease, epoch });
  }

  /** Its settlement starts (or it stopped being refreshed): never published again. */
  remove(requestId: string): void {
    this.held.delete(requestId);
  }

  /** Resolves once no re-publish is in progress (at once, nearly always). */
  async settled(): Promise<void> {
    if (this.publishing !== undefined) await this.publishing.catch(() => {});
  }

  /**
   * Asks the store for its epoch and, when it is not the known one, publishes every held lease
   * into it before taking it as known. One at a time; concurrent callers share it. Throws when the
   * store cannot be reached.
   */
  adopt(): Promise<void> {
    this.adopting ??= this.adoptOnce().finally(() => {
      this.adopting = undefined;
    });
    return this.adopting;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async adoptOnce(): Promise<void> {
    const { counters, recoveryMs } = this.options;
    for (let round = 0; round < MAX_ADOPT_ROUNDS; round++) {
      const { epoch } = await counters.checkEpoch({ known: this.known, candidate: randomUUID(), recoveryMs });
      const stale = [...this.held.values()].filter((entry) => entry.epoch !== epoch);
      if (epoch === this.known && stale.length === 0) return;
      if (this.known !== "" && epoch !== this.known) {
        this.options.logger?.warn(
          { leases: stale.length },
          "the limit store lost its memory; publishing the reservations in flight again",
        );
      }
      // Listed and published with no await between: a settlement that starts after the listing
      // waits for the publication (`settled`), one that started before is not in it.
      const publishing = this.publish(epoch, stale);
      this.publishing = publishing;
      let published: boolean;
      try {
        published = await publishing;
      } finally {
        this.publishing = undefined;
      }
      if (published) {
        for (const entry of stale) entry.epoch = epoch;
        this.known = epoch;
      }
      // Checked once more: the epoch may have changed again, or a lease been added meanwhile.
    }
    throw new Error("the limit store's epoch kept changing while reservations were re-published");
  }

  /** false when the epoch changed meanwhile. */
  private async publish(epoch: string, entries: HeldEntry[]): Promise<boolean> {
    const byWorkspace = new Map<string, HeldLease[]>();
    for (const entry of entries) {
      const leases = byWorkspace.get(entry.workspaceId) ?? [];
      leases.push(entry.lease);
      byWorkspace.set(entry.workspaceId, leases);
    }
    for (const [workspaceId, leases] of byWorkspace) {
      for (let start = 0; start < leases.length; start += REPUBLISH_BATCH) {
        const published = await this.options.counters.republish({
          epoch,
          workspaceId,
          leases: leases.slice(start, start + REPUBLISH_BATCH),
          leaseTtlMs: this.options.leaseTtlMs,
        });
        if (!published) return false;
      }
    }
    return true;
  }
}
