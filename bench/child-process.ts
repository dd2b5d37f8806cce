/**
 * Starts the bench's own child processes (upstream, bare proxy, gateway), waits for their ready
 * line, and stops them — by PID, only the ones started here. A registry lets the harness stop
 * whatever is still running when it is interrupted or its watchdog fires.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const TAIL_LINES = 40;
const started = new Set<BenchChild>();

export interface BenchChild {
  readonly name: string;
  readonly pid: number;
  /** The last lines of stdout and stderr, for diagnostics when something fails. */
  tail(): string[];
  /** The first lines the child logged at pino level error/fatal (≥ 50) — a run with these is suspect. */
  errorLines(): string[];
  /** How many such lines there were in all. */
  errorCount(): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed). */
  stop(graceMs?: number): Promise<number | null>;
}

export interface StartChildOptions {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Matched against each stdout line; the first match means ready. */
  readyPattern: RegExp;
  readyTimeoutMs: number;
}

export async function startChild(
  options: StartChildOptions,
): Promise<{ child: BenchChild; ready: RegExpExecArray }> {
  const process_ = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  const errors: string[] = [];
  let errorCount = 0;
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    if (!/"level":(5\d|6\d)/.test(line)) return;
    errorCount += 1;
    if (errors.length < TAIL_LINES) errors.push(line);
  };
  const exited = new Promise<number | null>((resolve) => process_.once("exit", (code) => resolve(code)));
  const child = createHandle(options.name, process_, exited, tail, errors, () => errorCount);
  started.add(child);
  void exited.then(() => started.delete(child));

  createInterface({ input: process_.stderr! }).on("line", remember);
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.name} not ready within ${options.readyTimeoutMs} ms`)),
      options.readyTimeoutMs,
    );
    createInterface({ input: process_.stdout! }).on("line", (line) => {
      remember(line);
      const match = options.readyPattern.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code}) before ready:\n${tail.join("\n")}`));
    });
    process_.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  }).catch(async (error: Error) => {
    await child.stop(2_000);
    throw error;
  });
  return { child, ready };
}

function createHandle(
  name: string,
  process_: ChildProcess,
  exited: Promise<number | null>,
  tail: string[],
  errors: string[],
  errorCount: () => number,
): BenchChild {
  const pid = process_.pid ?? -1;
  let stopping: Promise<number | null> | undefined;
  return {
    name,
    pid,
    tail: () => [...tail],
    errorLines: () => [...errors],
    errorCount,
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        if (process_.exitCode !== null || process_.signalCode !== null) return process_.exitCode;
        signal(pid, "SIGTERM");
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([
          exited,
          new Promise<"timeout">((resolve) => {
            timer = setTimeout(() => resolve("timeout"), graceMs);
          }),
        ]);
        clearTimeout(timer);
        if (code !== "timeout") return code;
        signal(pid, "SIGKILL");
        return exited;
      })();
      return stopping;
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Stops every child this process started and that still runs (interrupts, watchdog, errors). */
export async function stopStartedChildren(graceMs = 5_000): Promise<void> {
  await Promise.all([...started].map((child) => child.stop(graceMs)));
}

/** Last resort on process exit: synchronous SIGKILL of whatever is left, by PID. */
export function killStartedChildrenNow(): void {
  for (const child of started) signal(child.pid, "SIGKILL");
}
