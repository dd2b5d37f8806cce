/**
 * The usage recorder of embedded mode (PGlite in a data folder): records are journaled, then
 * written in batches. The journal (usage-journal.ts) is the mode's one local log and
 * `replayUsageJournal` its one replay, run by open-store.ts before the store is handed out. There
 * is no outbox: a record stays in the journal until PGlite has it, whatever PGlite does meanwhile.
 * With `memory://` nothing survives the process anyway, and records go through group commits
 * (group-commit.ts).
 *
 * `start` and `finish` append the record to the usage journal (usage-journal.ts: one
 * synchronous write, the durability of a PGlite COMMIT) and return; a writer puts what was
 * journaled into the database at most `lingerMs` later (`busyLingerMs` while the event loop is
 * busy), many records per statement. A request is not answered after a PGlite transaction
 * of its own (PGlite's cost is mostly per call rather than per row:
 * docs/decisions/0011-embedded-usage-journal.md), and at low rates records share a write.
 *
 * What stays true (docs/durability.md):
 * - Lookups see every journaled record at once: this instance is the only one using the data
 *   folder (its lock), and serves records not yet written from memory — final ones as final.
 * - Every other read of the database first waits for what was journaled before it
 *   (`flushBefore`): balances, key usage, counter seeding and reports read what requests settled.
 * - A crash loses nothing acknowledged: the next start replays the journal before serving.
 * - A record that can never be written (a permanent database error) is set aside in
 *   `journal/set-aside.jsonl` with the reason, and logged; others in its batch are written.
 *
 * In-progress records (every request's, before its upstream is called) are journaled at once but
 * written to the database only by `flush` (close, maintenance), never by the linger timer nor
 * before other reads (`drain`): lookups are answered from memory, no other read depends on a row
 * that costs 0, and the row would only be replaced by the final one. A request that finishes first
 * costs one row insert instead of an insert and an update that rewrites every index entry of the
 * row; a crash still leaves its in-progress record behind (the journal is replayed at the next
 * start, and the sweep of interrupted requests settles it).
 */

import type { GenerationOutcome, GenerationRecord, GenerationStart } from "../../engine/generation-record.js";
import { isPermanentDatabaseError } from "../sql/classify-database-error.js";
import type { SqlClient } from "../sql/sql-client.js";
import {
  assertValidOutcome,
  type FinishEntry,
  type SqlGenerationRepository,
} from "./generation-repository.js";
import { type BatchedGenerationRepository, writeAllOrEach } from "./group-commit.js";
import { decodeStart, toFinalRecord, toInProgressRecord } from "./record-views.js";
import type { JournalSegment, UsageJournal } from "./usage-journal.js";

export interface JournaledGenerationOptions {
  /** How long a journaled record may wait for others to share its write (default 25 ms). */
  lingerMs?: number;
  /**
   * The linger while the event loop is busy (default 100 ms): see `nextLinger`. Only the size of
   * the batches changes; what lookups and reads see does not.
   */
  busyLingerMs?: number;
  /** Event-loop utilisation (0–1) since the previous call; default Node's own measure. */
  loopUtilization?: () => number;
  /** Final records waiting that start a pass at once instead of after the linger (default 200). */
  maxBatch?: number;
  /**
   * Records per statement (default 50). A pass writes what is waiting in statements of at most
   * this many records and lets the requests in flight run between two of them (`restAfterStatement`):
   * with PGlite on the request thread a statement holds the loop for its whole length, so this
   * bounds the pause a batch puts on them (docs/performance.md, "Pauses on the request thread").
   */
  maxStatement?: number;
  /** First retry after a failed write; doubles up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** A journal append failed (the record is written with its batch all the same). */
  onJournalError?: (error: unknown, id: string) => void;
  /** A write failed (`setAside`: the records were set aside for good, else they are retried). */
  onWriteError?: (error: unknown, ids: readonly string[], setAside: boolean) => void;
}

export interface JournaledGenerationRepository extends BatchedGenerationRepository {
  /**
   * Resolves once everything journaled before the call is in the database, in-progress records
   * included; rejects if a write failed. `drain` waits for the final records only.
   */
  flush(): Promise<void>;
  /** Writes what is journaled, then closes the journal (its emptied segments are deleted). */
  close(): Promise<void>;
}

const DEFAULTS = {
  lingerMs: 25,
  busyLingerMs: 100,
  maxBatch: 200,
  maxStatement: 50,
  retryInitialMs: 100,
  retryMaxMs: 5_000,
};
/** Final records waiting, in batches, from which a pass writes its statements back to back. */
const BACKLOG_STATEMENTS = 4;
/** The longest rest between two statements of a pass. */
const MAX_REST_MS = 20;
/** Event-loop utilisation from which the loop counts as busy, and below which as no longer busy. */
const BUSY_UTILIZATION = 0.9;
const CALM_UTILIZATION = 0.7;
const LINE_VERSION = 1;

interface Entry {
  readonly id: string;
  readonly start: GenerationStart;
  /** Absent for an in-progress record. */
  readonly outcome?: GenerationOutcome;
  /** When it was journaled: the record's finish time, or its submission for an in-progress one. */
  readonly at: Date;
  readonly line: string;
  /** Absent when the append failed (disk full): the record waits for its batch in memory only. */
  readonly segment: JournalSegment | undefined;
  inFlight: boolean;
  done: boolean;
}

export function createJournaledGenerationRepository(
  sql: SqlGenerationRepository,
  journal: UsageJournal,
  options: JournaledGenerationOptions = {},
): JournaledGenerationRepository {
  // An option given as undefined keeps its default.
  const settings = Object.assign(
    {},
    DEFAULTS,
    Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
  ) as typeof DEFAULTS & JournaledGenerationOptions;
  const loopUtilization = options.loopUtilization ?? measureLoopUtilization();
  let lingerMs = settings.lingerMs;
  /** Journaled and not yet written, by id; a finish replaces its start. */
  const unwritten = new Map<string, Entry>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let retryDelayMs = 0;
  let lastFailure: unknown;
  let passWaiters: Array<() => void> = [];
  /** A flush is waiting: the next pass writes in-progress records too. */
  let startsWanted = false;
  /** Final records in `unwritten`: what the linger timer is for. */
  let finalsUnwritten = 0;

  function journalEntry(start: GenerationStart, outcome: GenerationOutcome | undefined): Entry {
    const at = new Date();
    // The admission time is part of the record; a replay after a crash must not move it.
    let stamped = start;
    if (!start.createdAt) {
      stamped = { ...start };
      stamped.createdAt = at;
    }
    const line = encodeJournalLine(stamped, outcome, at);
    let segment: JournalSegment | undefined;
    try {
      segment = journal.append(line);
    } catch (error) {
      // The journal is this mode's only local log: the record still reaches the database with its
      // batch, and is lost only if the process dies before that.
      settings.onJournalError?.(error, start.id);
    }
    return { id: start.id, start: stamped, outcome, at, line, segment, inFlight: false, done: false };
  }

  function complete(entry: Entry): void {
    if (entry.done) return;
    entry.done = true;
    entry.inFlight = false;
    if (entry.segment !== undefined) journal.release(entry.segment);
    if (unwritten.get(entry.id) === entry) {
      unwritten.delete(entry.id);
      if (entry.outcome) finalsUnwritten--;
    }
  }

  function schedule(delayMs: number): void {
    if (writing) return; // The pass in progress schedules the next one when it ends.
    if (timer) {
      if (delayMs > 0) return;
      clearTimeout(timer);
    }
    timer = setTimeout(runPass, delayMs);
    // A linger must not keep a process alive; a pass someone waits for (flush, drain, a full
    // batch) must run even when nothing else does, or an awaited flush could never resolve.
    if (delayMs > 0) timer.unref();
  }

  function runPass(): void {
    timer = undefined;
    const includeStarts = startsWanted;
    startsWanted = false;
    writing = writePass(includeStarts).finally(() => {
      writing = undefined;
      const waiters = passWaiters;
      passWaiters = [];
      for (const resolve of waiters) resolve();
      lingerMs = nextLinger(lingerMs, loopUtilization());
      const pending = pendingFinishCount();
      if (pending === 0) return; // In-progress records wait for a flush (see the top of the file).
      if (lastFailure !== undefined) schedule(retryDelayMs);
      else schedule(pending >= settings.maxBatch ? 0 : lingerMs);
    });
  }

  function pendingFinishCount(): number {
    let count = 0;
    for (const entry of unwritten.values()) if (!entry.inFlight && entry.outcome) count++;
    return count;
  }

  async function writePass(includeStarts: boolean): Promise<void> {
    const finishes: Entry[] = [];
    const starts: Entry[] = [];
    for (const entry of unwritten.values()) {
      if (entry.inFlight || (!entry.outcome && !includeStarts)) continue;
      entry.inFlight = true;
      (entry.outcome ? finishes : starts).push(entry);
    }
    lastFailure = undefined;
    let statementMs = -1;
    const timed = async (write: () => Promise<void>) => {
      if (statementMs >= 0) await restAfterStatement(statementMs);
      const began = performance.now();
      await write();
      statementMs = performance.now() - began;
    };
    for (const chunk of inChunks(finishes, settings.maxStatement)) {
      await timed(() =>
        writeAllOrEach(chunk, (items) => sql.finishMany(items.map(toFinishEntry)), complete, failed),
      );
    }
    for (const chunk of inChunks(starts, settings.maxStatement)) {
      await timed(() =>
        writeAllOrEach(chunk, (items) => sql.startMany(items.map((entry) => entry.start)), complete, failed),
      );
    }
    retryDelayMs = lastFailure === undefined ? 0 : nextRetryDelay(retryDelayMs);
  }

  /**
   * A busy event loop writes bigger batches. PGlite's cost is mostly per statement, and inside a
   * busy gateway each statement costs several times what it costs alone, so a longer linger serves
   * more requests in a saturated gateway (docs/decisions/0018-busy-linger.md). A calm loop keeps
   * the short linger: a batch blocks the loop while it is written (embedded PGlite on the request
   * thread), and a longer batch then only delays the requests that arrive during it. Between the
   * two thresholds the linger stays as it is, so it does not flip at every pass.
   */
  function nextLinger(current: number, utilization: number): number {
    if (utilization >= BUSY_UTILIZATION) return settings.busyLingerMs;
    if (utilization < CALM_UTILIZATION) return settings.lingerMs;
    return current;
  }

  /**
   * Between two statements of a pass the requests in flight run for about as long as the last
   * statement took: back to back, a request needing several turns of the loop would wait for most
   * of the pass anyway, one statement per turn. With a backlog (the writer falling behind, e.g. a
   * gateway with PGlite in its worker and more than one core) the next statement follows at once.
   */
  function restAfterStatement(statementMs: number): Promise<void> {
    if (finalsUnwritten >= BACKLOG_STATEMENTS * settings.maxBatch) return yieldToEventLoop();
    return new Promise((resolve) => setTimeout(resolve, Math.min(Math.ceil(statementMs), MAX_REST_MS)));
  }

  function nextRetryDelay(previousMs: number): number {
    return previousMs === 0 ? settings.retryInitialMs : Math.min(previousMs * 2, settings.retryMaxMs);
  }

  function failed(entry: Entry, error: unknown): void {
    const permanent = isPermanentDatabaseError(error);
    settings.onWriteError?.(error, [entry.id], permanent);
    if (permanent) {
      journal.setAside(entry.line, (error as Error).message ?? String(error));
      complete(entry);
      return;
    }
    entry.inFlight = false;
    lastFailure = error;
  }

  function nextPass(): Promise<void> {
    return new Promise((resolve) => passWaiters.push(resolve));
  }

  async function flush(includeStarts: boolean): Promise<void> {
    if (unwritten.size === 0) return;
    const awaited = [...unwritten.values()].filter((entry) => includeStarts || entry.outcome);
    while (awaited.some((entry) => !entry.done)) {
      if (includeStarts) startsWanted = true;
      if (!writing) schedule(0);
      await nextPass();
      if (!writing && lastFailure !== undefined && awaited.some((entry) => !entry.done)) throw lastFailure;
    }
  }

  return {
    async start(record) {
      if (unwritten.has(record.id)) return;
      unwritten.set(record.id, journalEntry(record, undefined));
    },

    async finish(id, outcome, start) {
      // Outbox lines parked before records carried their start: the row must exist, so write now.
      if (start === undefined) {
        await flush(true);
        return sql.finish(id, outcome);
      }
      if (start.id !== id) throw new RangeError(`start.id must be "${id}"`);
      assertValidOutcome(outcome);
      const previous = unwritten.get(id);
      // The first final outcome wins, as in the database (its guard on status = 'in_progress').
      if (previous?.outcome) return;
      unwritten.set(id, journalEntry(start, outcome));
      finalsUnwritten++;
      // The final row makes an unwritten in-progress row pointless; one being written completes.
      if (previous && !previous.inFlight) complete(previous);
      schedule(finalsUnwritten >= settings.maxBatch ? 0 : lingerMs);
    },

    async get(id, workspaceId) {
      const entry = unwritten.get(id);
      if (entry?.outcome) return entry.start.workspaceId === workspaceId ? toFinalEntryRecord(entry) : null;
      // Read before the database: a start written in between must not be missed by both.
      const stored = await sql.get(id, workspaceId);
      if (stored || !entry || entry.start.workspaceId !== workspaceId) return stored;
      return toInProgressRecord(entry.start, entry.at);
    },

    // Rows only: a record still journaled belongs to a request of this process, which is running.
    listInProgress: (admittedBefore, limit) => sql.listInProgress(admittedBefore, limit),
    flush: () => flush(true),
    drain: () => flush(false),
    finishedBefore: () => flush(false),
    async close() {
      await flush(true);
      journal.close();
    },
  };
}

/**
 * Every read through the returned client first waits for what was journaled before it, so the
 * database never looks as if a settled request had not happened (balances, usage, seeding).
 */
export function flushBefore(client: SqlClient, flush: () => Promise<void>): SqlClient {
  return {
    async query(text, params) {
      await flush();
      return client.query(text, params);
    },
    async run(text, params) {
      await flush();
      return client.run(text, params);
    },
    async executeScript(text) {
      await flush();
      return client.executeScript(text);
    },
    async transaction(fn) {
      await flush();
      return client.transaction(fn);
    },
    close: () => client.close(),
  };
}

/**
 * Start-up: writes what an earlier process journaled and had not written (a crash, or a kill
 * before its final flush), then deletes those segments. Finals win over in-progress records, and
 * the first final of an id over later ones. A line that cannot be read (torn by the crash) or
 * written (permanent error) is set aside; any other failure throws and leaves the journal as it is.
 */
export async function replayUsageJournal(
  sql: SqlGenerationRepository,
  journal: UsageJournal,
): Promise<{ written: number; setAside: number }> {
  const finals = new Map<string, { entry: FinishEntry & { start: GenerationStart }; line: string }>();
  const starts = new Map<string, { start: GenerationStart; line: string }>();
  let setAside = 0;
  for (const line of journal.readLeftovers()) {
    const decoded = decodeJournalLine(line);
    if (!decoded) {
      journal.setAside(line, "unreadable journal line (torn by a crash?)");
      setAside++;
    } else if (decoded.outcome) {
      if (!finals.has(decoded.start.id)) {
        const { start, outcome, at } = decoded;
        finals.set(start.id, { entry: { id: start.id, start, outcome, finishedAt: at }, line });
      }
    } else starts.set(decoded.start.id, { start: decoded.start, line });
  }
  let written = 0;
  const counted = () => {
    written++;
  };
  // Anything but a permanent refusal stops the start, leaving the journal for the next attempt.
  const setAsideOrThrow = (item: { line: string }, error: unknown) => {
    if (!isPermanentDatabaseError(error)) throw error;
    journal.setAside(item.line, (error as Error).message);
    setAside++;
  };
  for (const chunk of inChunks([...finals.values()], DEFAULTS.maxBatch)) {
    await writeAllOrEach(
      chunk,
      (items) => sql.finishMany(items.map((item) => item.entry)),
      counted,
      setAsideOrThrow,
    );
  }
  const startItems = [...starts.values()].filter((item) => !finals.has(item.start.id));
  for (const chunk of inChunks(startItems, DEFAULTS.maxBatch)) {
    await writeAllOrEach(
      chunk,
      (items) => sql.startMany(items.map((item) => item.start)),
      counted,
      setAsideOrThrow,
    );
  }
  journal.removeLeftovers();
  return { written, setAside };
}

/** Node's event-loop utilisation since the previous call (the first call: since start). */
export function measureLoopUtilization(): () => number {
  let previous = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, previous);
    previous = now;
    return utilization;
  };
}

/** Lets timers and I/O (the requests in flight) run before the next statement. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function* inChunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let index = 0; index < items.length; index += size) yield items.slice(index, index + size);
}

function toFinishEntry(entry: Entry): FinishEntry & { start: GenerationStart } {
  return {
    id: entry.id,
    start: entry.start,
    outcome: entry.outcome as GenerationOutcome,
    finishedAt: entry.at,
  };
}

function encodeJournalLine(start: GenerationStart, outcome: GenerationOutcome | undefined, at: Date): string {
  return JSON.stringify({ v: LINE_VERSION, at: at.toISOString(), start, ...(outcome ? { outcome } : {}) });
}

function decodeJournalLine(
  line: string,
): { start: GenerationStart; outcome?: GenerationOutcome; at: Date } | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { v, at, start, outcome } = value as Record<string, unknown>;
  if (v !== LINE_VERSION || typeof at !== "string" || typeof start !== "object" || start === null)
    return null;
  const decodedStart = decodeStart(start as Record<string, unknown>);
  if (typeof decodedStart.id !== "string" || decodedStart.id === "") return null;
  // Field values are checked by the repository when the record is written.
  return {
    start: decodedStart,
    at: new Date(at),
    ...(typeof outcome === "object" && outcome !== null ? { outcome: outcome as GenerationOutcome } : {}),
  };
}

function toFinalEntryRecord(entry: Entry): GenerationRecord {
  return toFinalRecord(entry.start, entry.outcome as GenerationOutcome, entry.at);
}
