/**
 * Shared tail of the bench's child-process entry points: print the ready line the harness waits
 * for, and close cleanly on SIGTERM/SIGINT (the harness stops its children by PID with SIGTERM).
 */
export const READY_PREFIX = "BENCH_READY";
export const READY_PATTERN = /^BENCH_READY (\d+)$/;

export function announceReady(port: number, close: () => Promise<void>): void {
  const shutdown = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  process.stdout.write(`${READY_PREFIX} ${port}\n`);
}

/** `--name value` from argv as a positive integer, else the default. */
export function readIntegerFlag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

export function readStringFlag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}
