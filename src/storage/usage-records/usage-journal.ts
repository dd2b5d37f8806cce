/**
 * The embedded gateway's usage journal: append-only JSON-lines segments in `<dataDir>/journal/`.
 * A usage record is appended here (one `write(2)`, synchronous) before the request is answered, and
 * reaches PGlite later in a batch (journaled-generation-repository.ts). The append puts the line in
 * the OS page cache, exactly the durability a PGlite COMMIT has (PGlite writes its WAL without
 * fsync): it survives a crash of the process, not of the machine. Lines of an earlier process are
 * replayed into the database at the next start, then their segments are deleted.
 *
 * Segments: entries are counted per segment; one whose every entry reached the database is
 * emptied (the current one, by truncation) or deleted (an older one). A segment is rotated after
 * `maxSegmentBytes`, so under a load that never lets the count reach zero no file grows unbounded.
 * One process owns the folder (the data-folder lock), so there is no cross-process coordination.
 */
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

export const SET_ASIDE_FILE_NAME = "set-aside.jsonl";
const SEGMENT_PATTERN = /^segment-\d+-\d+\.jsonl$/;
const DEFAULT_MAX_SEGMENT_BYTES = 16 * 1024 * 1024;

export interface JournalSegment {
  readonly name: string;
}

export interface UsageJournal {
  /** Appends one line; when it returns, the line survives a crash of this process. Throws on I/O errors. */
  append(line: string): JournalSegment;
  /** One entry of `segment` is in the database (or set aside): its line is no longer needed. */
  release(segment: JournalSegment): void;
  /** Keeps a line that can never be applied where an operator finds it, with the reason. */
  setAside(line: string, reason: string): void;
  /** Lines left by an earlier process (in append order); torn last lines included as they are. */
  readLeftovers(): string[];
  /** After the leftovers were applied: delete their segments. */
  removeLeftovers(): void;
  /** Closes the current segment; deletes it when every entry was released. */
  close(): void;
  readonly directory: string;
}

interface Segment extends JournalSegment {
  readonly name: string;
  readonly path: string;
  fd: number;
  bytes: number;
  /** Entries appended and not yet released. */
  outstanding: number;
}

export function openUsageJournal(
  directory: string,
  options: { maxSegmentBytes?: number } = {},
): UsageJournal {
  const maxSegmentBytes = options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES;
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const leftovers = readdirSync(directory)
    .filter((name) => SEGMENT_PATTERN.test(name))
    .sort(compareSegmentNames);
  let sequence = 0;
  const openSegments = new Set<Segment>();

  function openSegment(): Segment {
    // Time first: names sort in creation order across restarts; the sequence orders one process's.
    const name = `segment-${Date.now()}-${String(++sequence).padStart(6, "0")}.jsonl`;
    const path = join(directory, name);
    const segment: Segment = { name, path, fd: openSync(path, "a", 0o600), bytes: 0, outstanding: 0 };
    openSegments.add(segment);
    return segment;
  }

  let current = openSegment();

  function retire(segment: Segment): void {
    closeSync(segment.fd);
    unlinkSync(segment.path);
    openSegments.delete(segment);
  }

  return {
    directory,
    append(line) {
      if (current.bytes >= maxSegmentBytes) {
        const full = current;
        current = openSegment();
        if (full.outstanding === 0) retire(full);
      }
      // A line torn by a crash stays in that process's segment; this process appends to its own.
      const text = `${line}\n`;
      writeSync(current.fd, text);
      current.bytes += Buffer.byteLength(text);
      current.outstanding++;
      return current;
    },
    release(handle) {
      const segment = handle as Segment;
      if (!openSegments.has(segment)) return;
      segment.outstanding--;
      if (segment.outstanding > 0) return;
      if (segment !== current) retire(segment);
      else if (segment.bytes > 0) {
        // O_APPEND: the next write goes to the new end, offset 0.
        ftruncateSync(segment.fd, 0);
        segment.bytes = 0;
      }
    },
    setAside(line, reason) {
      const entry = JSON.stringify({ setAsideAt: new Date().toISOString(), reason, line });
      appendFileSync(join(directory, SET_ASIDE_FILE_NAME), `${entry}\n`, { mode: 0o600 });
    },
    readLeftovers() {
      const lines: string[] = [];
      for (const name of leftovers) {
        for (const line of readFileSync(join(directory, name), "utf8").split("\n")) {
          if (line.trim() !== "") lines.push(line);
        }
      }
      return lines;
    },
    removeLeftovers() {
      for (const name of leftovers.splice(0)) unlinkSync(join(directory, name));
    },
    close() {
      for (const segment of [...openSegments]) {
        if (segment.outstanding === 0) retire(segment);
        else {
          closeSync(segment.fd);
          openSegments.delete(segment);
        }
      }
    },
  };
}

/** `segment-<ms>-<seq>`: numeric order of both parts (names of one millisecond differ in seq). */
function compareSegmentNames(a: string, b: string): number {
  const [, aTime, aSeq] = a.match(/^segment-(\d+)-(\d+)/) ?? [];
  const [, bTime, bSeq] = b.match(/^segment-(\d+)-(\d+)/) ?? [];
  return Number(aTime) - Number(bTime) || Number(aSeq) - Number(bSeq);
}
