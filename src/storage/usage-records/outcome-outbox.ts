/**
 * The PostgreSQL recorder's local log: final records that could not be written to the database
 * are parked here durably and replayed idempotently (distributed-recorder.ts). Two
 * implementations: an append-only JSON-lines file with fsync (`openFileOutcomeOutbox`, whenever
 * the gateway has a data folder) and an in-memory twin (`createMemoryOutcomeOutbox`, only for
 * `memory://` data folders). Embedded mode has no outbox: its journal (usage-journal.ts) keeps
 * every record until PGlite has it.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import { decodeStart } from "./record-views.js";

export interface ParkedOutcome {
  /** The request id: the generation record the outcome belongs to. */
  id: string;
  outcome: GenerationOutcome;
  /**
   * The record's identity, so replay can write it even if its in-progress row was never written
   * (absent in lines parked before starts became optional: replay then needs the row).
   */
  start?: GenerationStart;
  /** ISO time of parking, for operators reading the file. */
  parkedAt: string;
}

export interface ClaimedBatch {
  /** For logs (a file name in the file outbox). */
  readonly name: string;
  readonly entries: ParkedOutcome[];
  /** Lines that are not a parked outcome (a write torn by a crash); set aside with the batch. */
  readonly unreadable: string[];
  /** Every entry is applied or set aside: drop the batch for good. */
  complete(): Promise<void>;
}

export interface OutcomeOutbox {
  /** false for the in-memory twin: parked outcomes do not survive a process restart. */
  readonly durable: boolean;
  /** Resolves once the entry would survive a crash of this process. */
  park(entry: ParkedOutcome): Promise<void>;
  /**
   * Batches to replay: everything parked since the last claim, plus batches whose replay has not
   * completed (a claimed batch is handed out again until `complete()` is called).
   */
  claim(): Promise<ClaimedBatch[]>;
  /** Keeps an entry that can never be applied where an operator can find it. */
  setAside(entry: ParkedOutcome | string, reason: string): Promise<void>;
  /** Waits for parks in flight. */
  close(): Promise<void>;
}

const LINE_VERSION = 1;

export function encodeParkedOutcome(entry: ParkedOutcome): string {
  return JSON.stringify({
    v: LINE_VERSION,
    id: entry.id,
    parkedAt: entry.parkedAt,
    outcome: entry.outcome,
    ...(entry.start ? { start: entry.start } : {}),
  });
}

/** null for anything that is not a whole line of the current version. */
export function decodeParkedOutcome(line: string): ParkedOutcome | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { v, id, parkedAt, outcome, start } = value as Record<string, unknown>;
  if (v !== LINE_VERSION || typeof id !== "string" || id === "") return null;
  if (typeof outcome !== "object" || outcome === null) return null;
  // Field values are checked by the repository's own validation when the outcome is replayed.
  return {
    id,
    parkedAt: typeof parkedAt === "string" ? parkedAt : "",
    outcome: outcome as GenerationOutcome,
    ...(typeof start === "object" && start !== null
      ? { start: decodeStart(start as Record<string, unknown>) }
      : {}),
  };
}

/**
 * The file outbox: append-only JSON lines in `<dataDir>/outbox/`, written and fsynced before a
 * park is acknowledged, so a parked outcome survives a crash or restart of the process.
 *
 * Files:
 * - `pending.jsonl`: new parks are appended here (by every process using the folder).
 * - `replaying-<owner>-<n>.jsonl`: a batch claimed for replay. Claiming is an atomic rename of
 *   `pending.jsonl`, so new parks start a fresh file while the batch is replayed. A batch whose
 *   claimer died is adopted by the next claimer (at its first claim, or once the file is idle).
 * - `set-aside.jsonl`: entries that can never be applied, with the reason, for an operator.
 *
 * Within one process, writes and claims of `pending.jsonl` take turns. Across processes sharing
 * the folder, a claim may rename the file between another writer's open and its write; the writer
 * catches that after fsync (the path no longer names the file it wrote) and writes the lines
 * again. A line may therefore be replayed twice; replay is idempotent.
 */
export const PENDING_FILE_NAME = "pending.jsonl";
export const SET_ASIDE_FILE_NAME = "set-aside.jsonl";
const CLAIMED_FILE_PATTERN = /^replaying-.+\.jsonl$/;
/** A claimed batch untouched this long belongs to a claimer that died (a replay pass is seconds). */
const ORPHAN_AFTER_MS = 60_000;
/** Rewrites after losing the rename race; more than one in a row needs a storm of claims. */
const MAX_WRITE_ATTEMPTS = 20;

interface PendingPark {
  line: string;
  resolve(): void;
  reject(error: unknown): void;
}

export async function openFileOutcomeOutbox(directory: string): Promise<OutcomeOutbox> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const pendingPath = join(directory, PENDING_FILE_NAME);
  const owner = `${process.pid}-${randomBytes(4).toString("hex")}`;
  const ownClaims = new Set<string>();
  let claimSequence = 0;
  let firstClaim = true;

  // Writes to and claims of pending.jsonl in this process run one at a time.
  let turn: Promise<unknown> = Promise.resolve();
  const exclusively = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = turn.then(fn, fn);
    turn = result.catch(() => {});
    return result;
  };

  // Group commit: parks arriving while a write is in flight share the next write and fsync.
  let queue: PendingPark[] = [];
  let flushing: Promise<void> | undefined;

  function startFlushing(): void {
    if (flushing) return;
    flushing = (async () => {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        try {
          await appendToPending(batch.map((park) => park.line).join("\n"));
          for (const park of batch) park.resolve();
        } catch (error) {
          for (const park of batch) park.reject(error);
        }
      }
    })().finally(() => {
      flushing = undefined;
      if (queue.length > 0) startFlushing();
    });
  }

  /** The leading newline terminates a line torn by an earlier crash; blank lines are skipped. */
  async function appendToPending(lines: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      if (await exclusively(() => appendOnce(lines))) return;
      // Another process claimed the file while we wrote: our lines may have missed that replay.
      // A random pause keeps two processes from meeting in the same window again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
    }
    throw new Error(`Outbox ${pendingPath}: the file kept being claimed during writes`);
  }

  /** false when the file was renamed away between open and fsync. */
  async function appendOnce(lines: string): Promise<boolean> {
    const handle = await open(pendingPath, "a", 0o600);
    let stillPending: boolean;
    try {
      await handle.write(`\n${lines}\n`);
      await handle.datasync();
      const written = await handle.stat();
      const current = await stat(pendingPath).catch(() => null);
      stillPending = current !== null && current.ino === written.ino && current.dev === written.dev;
    } finally {
      await handle.close();
    }
    // A new file's directory entry must be durable too, or a crash could lose the whole file.
    if (stillPending) await syncDirectory(directory);
    return stillPending;
  }

  async function appendDurably(path: string, text: string): Promise<void> {
    const handle = await open(path, "a", 0o600);
    try {
      await handle.write(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  async function takeOver(from: string): Promise<boolean> {
    const to = join(directory, `replaying-${owner}-${++claimSequence}.jsonl`);
    try {
      await rename(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
    ownClaims.add(to);
    return true;
  }

  async function adoptOrphans(): Promise<void> {
    const adoptAll = firstClaim;
    firstClaim = false;
    for (const name of await readdir(directory)) {
      if (!CLAIMED_FILE_PATTERN.test(name)) continue;
      const path = join(directory, name);
      if (ownClaims.has(path)) continue;
      // At start-up every earlier claim is an orphan (the previous incarnation of a process, or a
      // peer: replaying a live peer's batch as well is harmless, it is idempotent).
      if (!adoptAll) {
        const info = await stat(path).catch(() => null);
        if (!info || Date.now() - info.mtimeMs < ORPHAN_AFTER_MS) continue;
      }
      await takeOver(path);
    }
  }

  async function readBatch(path: string): Promise<ClaimedBatch | null> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      // Adopted by another claimer in the meantime: it replays the batch now.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        ownClaims.delete(path);
        return null;
      }
      throw error;
    }
    const entries: ParkedOutcome[] = [];
    const unreadable: string[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const entry = decodeParkedOutcome(line);
      if (entry) entries.push(entry);
      else unreadable.push(line);
    }
    return {
      name: path.slice(directory.length + 1),
      entries,
      unreadable,
      async complete() {
        await unlink(path).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT") throw error;
        });
        ownClaims.delete(path);
      },
    };
  }

  return {
    durable: true,

    park(entry) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ line: encodeParkedOutcome(entry), resolve, reject });
        startFlushing();
      });
    },

    async claim() {
      const tookPending = await exclusively(() => takeOver(pendingPath));
      await adoptOrphans();
      if (tookPending || ownClaims.size > 0) await syncDirectory(directory);
      const batches: ClaimedBatch[] = [];
      for (const path of [...ownClaims]) {
        const batch = await readBatch(path);
        if (batch) batches.push(batch);
      }
      return batches;
    },

    async setAside(entry, reason) {
      const setAsideAt = new Date().toISOString();
      const line = JSON.stringify(
        typeof entry === "string"
          ? { line: entry, reason, setAsideAt }
          : { id: entry.id, entry, reason, setAsideAt },
      );
      await appendDurably(join(directory, SET_ASIDE_FILE_NAME), `${line}\n`);
    },

    async close() {
      while (flushing) await flushing;
    },
  };
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The outbox when the gateway has no data folder (`memory://`, tests): same contract, same replay,
 * but parked outcomes live only as long as the process. Deployments always have a folder.
 */
export interface MemoryOutcomeOutbox extends OutcomeOutbox {
  /** Entries set aside so far (tests inspect them). */
  readonly setAsideEntries: Array<{ entry: ParkedOutcome | string; reason: string }>;
}

export function createMemoryOutcomeOutbox(): MemoryOutcomeOutbox {
  let pending: ParkedOutcome[] = [];
  const claimed = new Set<ClaimedBatch>();
  const setAsideEntries: MemoryOutcomeOutbox["setAsideEntries"] = [];
  let sequence = 0;

  return {
    durable: false,
    setAsideEntries,
    async park(entry) {
      pending.push(entry);
    },
    async claim() {
      if (pending.length > 0) {
        const entries = pending;
        pending = [];
        const batch: ClaimedBatch = {
          name: `memory-${++sequence}`,
          entries,
          unreadable: [],
          complete: async () => {
            claimed.delete(batch);
          },
        };
        claimed.add(batch);
      }
      return [...claimed];
    },
    async setAside(entry, reason) {
      setAsideEntries.push({ entry, reason });
    },
    async close() {},
  };
}
