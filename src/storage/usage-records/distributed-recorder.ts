/**
 * The usage recorder of the PostgreSQL mode, layer by layer (`createDistributedRecorder`):
 * - the SQL rows (generation-repository.ts), written in group commits (group-commit.ts);
 * - the durability below: a final record that cannot reach PostgreSQL is parked in the outbox
 *   (outcome-outbox.ts, the mode's one local log) and replayed;
 * - with Redis, the in-progress record stored in the reservation's own script and shared with
 *   every instance (shared-in-progress-records.ts, decision 0316).
 *
 * Durability: `generations.finish` holds whatever the database does. An outcome that cannot be written within a deadline is parked in the outbox instead, and a
 * background replayer applies parked outcomes when the database answers again, at start-up, and
 * every few seconds. Replay is idempotent because `finish` is (a guarded UPDATE plus the ledger's
 * UNIQUE generation_id): an outcome applied twice debits the workspace once.
 *
 * While the database is known to be unreachable (a connection failure, or the replayer's ping
 * failing), outcomes are parked at once instead of each request waiting out the deadline; the
 * replayer's successful pass ends that state.
 */

import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import { isPermanentDatabaseError } from "../sql/classify-database-error.js";
import type { SharedState } from "../store.js";
import { DeadlineExceededError, withDeadline } from "../with-deadline.js";
import type { OutcomeOutbox, ParkedOutcome } from "./outcome-outbox.js";
import { type SharedInProgressOptions, withSharedInProgressRecords } from "./shared-in-progress-records.js";

export type OutboxEvent =
  | { type: "parked"; id: string; reason: string }
  | { type: "replayed"; applied: number; setAside: number; remaining: number }
  | { type: "set-aside"; id: string | null; reason: string }
  | { type: "replay-blocked"; remaining: number; retryInMs: number }
  | { type: "replay-error"; error: Error; retryInMs: number };

export interface DurableGenerationOptions {
  outbox: OutcomeOutbox;
  /** Round trip to the database (tells "down" apart from "this entry fails"). */
  ping(): Promise<void>;
  /** How long a request may wait for its outcome to be written before it is parked instead. */
  finishDeadlineMs?: number;
  /** How often the replayer looks for parked outcomes while all is well (other processes' too). */
  idleCheckMs?: number;
  /** First retry after a failure; doubles up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Replay attempts of one entry while the database answers pings, before it is set aside. */
  maxAttemptsWhileReachable?: number;
  onEvent?: (event: OutboxEvent) => void;
}

export interface ReplayResult {
  applied: number;
  setAside: number;
  remaining: number;
}

export interface DurableGenerationRepository extends GenerationRepository {
  /** Starts the background replayer with an immediate pass (start-up replay). */
  startReplayer(): void;
  /** Runs one replay pass now (waits for a pass in progress first). */
  replayNow(): Promise<ReplayResult>;
  /** Stops the replayer; parked outcomes stay in the outbox for the next start. */
  close(): Promise<void>;
}

const DEFAULTS = {
  finishDeadlineMs: 3_000,
  idleCheckMs: 5_000,
  retryInitialMs: 250,
  retryMaxMs: 10_000,
  maxAttemptsWhileReachable: 3,
};
const PING_DEADLINE_MS = 1_000;

export function createDurableGenerationRepository(
  inner: GenerationRepository,
  options: DurableGenerationOptions,
): DurableGenerationRepository {
  const settings = {
    finishDeadlineMs: options.finishDeadlineMs ?? DEFAULTS.finishDeadlineMs,
    idleCheckMs: options.idleCheckMs ?? DEFAULTS.idleCheckMs,
    retryInitialMs: options.retryInitialMs ?? DEFAULTS.retryInitialMs,
    retryMaxMs: options.retryMaxMs ?? DEFAULTS.retryMaxMs,
    maxAttemptsWhileReachable: options.maxAttemptsWhileReachable ?? DEFAULTS.maxAttemptsWhileReachable,
  };
  const { outbox } = options;
  const emit = options.onEvent ?? (() => {});
  const attempts = new Map<string, number>();
  let databaseReachable = true;
  let retryDelayMs = settings.retryInitialMs;
  let timer: NodeJS.Timeout | undefined;
  let timerDueAt = Number.POSITIVE_INFINITY;
  let pass: Promise<ReplayResult> | undefined;
  let started = false;
  let closed = false;

  async function park(
    id: string,
    outcome: GenerationOutcome,
    start: GenerationStart | undefined,
    reason: string,
  ): Promise<void> {
    await outbox.park({ id, outcome, ...(start ? { start } : {}), parkedAt: new Date().toISOString() });
    emit({ type: "parked", id, reason });
    schedule(retryDelayMs);
  }

  function schedule(delayMs: number): void {
    if (closed || !started) return;
    const dueAt = Date.now() + delayMs;
    if (timer && timerDueAt <= dueAt) return;
    clearTimeout(timer);
    timerDueAt = dueAt;
    timer = setTimeout(() => {
      timer = undefined;
      timerDueAt = Number.POSITIVE_INFINITY;
      void replayNow().catch(() => {});
    }, delayMs);
    // Parked outcomes are on disk; a pending retry must not keep a finished process alive.
    timer.unref();
  }

  async function isDatabaseReachable(): Promise<boolean> {
    try {
      await withDeadline(options.ping(), PING_DEADLINE_MS, "database ping");
      return true;
    } catch {
      return false;
    }
  }

  async function runPass(): Promise<ReplayResult & { blocked: boolean }> {
    const result = { applied: 0, setAside: 0, remaining: 0, blocked: false };
    for (const batch of await outbox.claim()) {
      let batchSettled = true;
      for (const entry of batch.entries) {
        if (result.blocked) {
          batchSettled = false;
          result.remaining++;
          continue;
        }
        const outcome = await replayEntry(entry);
        if (outcome === "applied") result.applied++;
        else if (outcome === "set-aside") result.setAside++;
        else {
          batchSettled = false;
          result.remaining++;
          if (outcome === "database-down") result.blocked = true;
        }
      }
      if (!batchSettled) continue;
      for (const line of batch.unreadable) {
        await outbox.setAside(line, "unreadable outbox line");
        emit({ type: "set-aside", id: null, reason: "unreadable outbox line" });
      }
      await batch.complete();
    }
    return result;
  }

  async function replayEntry(
    entry: ParkedOutcome,
  ): Promise<"applied" | "set-aside" | "retry" | "database-down"> {
    try {
      await withDeadline(
        inner.finish(entry.id, entry.outcome, entry.start),
        settings.finishDeadlineMs,
        "replayed finish",
      );
      attempts.delete(entry.id);
      return "applied";
    } catch (error) {
      if (!isPermanentDatabaseError(error)) {
        if (!(await isDatabaseReachable())) return "database-down";
        // The database answers, yet this entry fails: count it, so one bad entry cannot block
        // the outbox forever.
        const count = (attempts.get(entry.id) ?? 0) + 1;
        attempts.set(entry.id, count);
        if (count < settings.maxAttemptsWhileReachable) return "retry";
      }
      attempts.delete(entry.id);
      const reason = (error as Error).message ?? String(error);
      await outbox.setAside(entry, reason);
      emit({ type: "set-aside", id: entry.id, reason });
      return "set-aside";
    }
  }

  function replayNow(): Promise<ReplayResult> {
    const previous = pass ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        try {
          const result = await runPass();
          databaseReachable = !result.blocked;
          if (result.applied > 0 || result.setAside > 0) {
            emit({
              type: "replayed",
              applied: result.applied,
              setAside: result.setAside,
              remaining: result.remaining,
            });
          }
          if (result.remaining > 0) {
            const retryInMs = backOff();
            if (result.blocked) emit({ type: "replay-blocked", remaining: result.remaining, retryInMs });
            schedule(retryInMs);
          } else {
            retryDelayMs = settings.retryInitialMs;
            schedule(settings.idleCheckMs);
          }
          return { applied: result.applied, setAside: result.setAside, remaining: result.remaining };
        } catch (error) {
          // The outbox itself failed (disk): keep trying, the entries are where they were.
          const retryInMs = backOff();
          emit({ type: "replay-error", error: error as Error, retryInMs });
          schedule(retryInMs);
          throw error;
        }
      });
    pass = next;
    void next
      .finally(() => {
        if (pass === next) pass = undefined;
      })
      .catch(() => {});
    return next;
  }

  function backOff(): number {
    const delay = retryDelayMs;
    retryDelayMs = Math.min(retryDelayMs * 2, settings.retryMaxMs);
    return delay;
  }

  return {
    start: (record) => inner.start(record),
    // Known down: a record is parked (written and synced) before its answer ends, as it always was.
    answerWaitsForRecord: () => !databaseReachable,
    get: (id, workspaceId) => inner.get(id, workspaceId),
    listInProgress: (admittedBefore, limit) => inner.listInProgress(admittedBefore, limit),

    async finish(id, outcome, start) {
      if (databaseReachable) {
        try {
          await withDeadline(inner.finish(id, outcome, start), settings.finishDeadlineMs, "finish");
          return;
        } catch (error) {
          if (isPermanentDatabaseError(error)) throw error;
          // A slow database is not a down one: only this outcome is parked. Whether the database
          // is down is then decided by the replayer's ping, moments later.
          if (!(error instanceof DeadlineExceededError)) databaseReachable = false;
          await park(id, outcome, start, (error as Error).message ?? String(error));
          return;
        }
      }
      await park(id, outcome, start, "database unreachable");
    },

    startReplayer() {
      if (started || closed) return;
      started = true;
      schedule(0);
    },

    replayNow,

    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await pass?.catch(() => {});
      await outbox.close();
    },
  };
}

/** A mode's usage recorder as the gateway holds it: the engine's port, plus its outbox's replay. */
export interface UsageRecorder extends GenerationRepository {
  /** One pass of the outbox's replay now (it also runs by itself); embedded mode has none. */
  replayParkedOutcomes(): Promise<ReplayResult>;
  /** Stops the replay; parked outcomes stay in the outbox for the next start. */
  close(): Promise<void>;
}

export interface DistributedRecorderOptions extends Omit<DurableGenerationOptions, "outbox" | "ping"> {
  outbox: OutcomeOutbox;
  ping(): Promise<void>;
  /** Redis: in-progress records live there (absent, or in-process: rows only). */
  state?: SharedState;
  onSharedError: SharedInProgressOptions["onError"];
}

/**
 * `rows`: the store's group-committed SQL repository. The replay starts at once; its first pass is
 * the start-up replay of what an earlier process parked.
 */
export function createDistributedRecorder(
  rows: GenerationRepository,
  options: DistributedRecorderOptions,
): UsageRecorder {
  const durable = createDurableGenerationRepository(rows, options);
  durable.startReplayer();
  const shared =
    options.state?.mode === "redis"
      ? withSharedInProgressRecords(durable, options.state, { onError: options.onSharedError })
      : durable;
  return Object.assign({}, shared, {
    replayParkedOutcomes: () => durable.replayNow(),
    close: () => durable.close(),
  });
}
