/** JSON logs on stdout; secrets and prompt bodies never reach them (redaction is the last guard). */
import { type Logger, pino } from "pino";

export type { Logger };

export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  'headers["x-api-key"]',
  'headers["x-internal-token"]',
  "apiKey",
  "*.apiKey",
  "secret",
  "*.secret",
  "body",
  "*.body",
];

/**
 * Lines to stdout are gathered into writes of at least this many bytes: one write per log line
 * (pino's default) made the per-request line a system call per request, a large share of a busy
 * instance's CPU. The writes stay synchronous: a write handed to libuv's thread pool costs the
 * request thread more than the system call it saves.
 */
const STDOUT_BATCH_BYTES = 12 * 1024;
/** A batch is written after at most this long, however small: a quiet instance's lines still show promptly. */
const STDOUT_FLUSH_MS = 100;

let stdout: pino.DestinationStream | undefined;
/** Info line writers' hand-overs, run at exit before stdout's last flush (weakly held: a writer may be dropped). */
const handOversAtExit = new Set<WeakRef<() => void>>();

/** The process's one batched stdout destination; what it still holds is written when the process exits. */
function batchedStdout(): pino.DestinationStream {
  if (stdout !== undefined) return stdout;
  const stream = pino.destination({
    dest: 1,
    sync: true,
    minLength: STDOUT_BATCH_BYTES,
    periodicFlush: STDOUT_FLUSH_MS,
  });
  // A process.exit, a crash or the end of the event loop loses no gathered line.
  process.once("exit", () => {
    for (const handOver of handOversAtExit) handOver.deref()?.();
    try {
      stream.flushSync();
    } catch {
      // stdout is gone (a closed pipe): nothing can be written anyway.
    }
  });
  stdout = stream;
  return stream;
}

/** A logger writing to `destination`, or to stdout in batches. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const stream = (destination as pino.DestinationStream | undefined) ?? batchedStdout();
  return pino({ level, base: undefined, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, stream);
}

/** Where a logger writes (pino keeps it under a symbol). */
function destinationOf(logger: Logger): pino.DestinationStream {
  return (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
}

/** What pino starts every info line with: `{"level":30,"time":<ms>,"msg":`. */
export function startInfoLine(time: number): string {
  return `{"level":30,"time":${time},"msg":`;
}

/** Lines an info line writer gathers before it hands them to the destination as one string. */
const LINES_PER_HANDOVER = 32;

/**
 * Writes lines at info level to `logger`'s destination, each the JSON text `format` makes of an
 * item (starting with {@link startInfoLine}: pino's `level`, `time` and `msg` keys), without
 * pino's key-by-key serialisation and without redaction: for a line built only from fields that
 * cannot hold a secret (the request line), written once per request, where pino's path was a large
 * share of the allocations. `format` runs only when info is enabled. Lines are handed to the
 * destination in groups (the destination measures every string it takes), within
 * `STDOUT_FLUSH_MS`, and when the process exits (before stdout's last flush).
 */
export function createInfoLineWriter<T>(logger: Logger, format: (item: T) => string): (item: T) => void {
  const destination = destinationOf(logger);
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const handOver = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const text = `${lines.join("\n")}\n`;
    lines = [];
    destination.write(text);
  };
  // Writers dropped since (a test's routers) leave only their empty references behind: cleared here.
  for (const reference of handOversAtExit)
    if (reference.deref() === undefined) handOversAtExit.delete(reference);
  handOversAtExit.add(new WeakRef(handOver));
  return (item) => {
    if (!logger.isLevelEnabled("info")) return;
    lines.push(format(item));
    if (lines.length >= LINES_PER_HANDOVER) handOver();
    else if (timer === undefined) {
      timer = setTimeout(handOver, STDOUT_FLUSH_MS);
      timer.unref();
    }
  };
}
