/**
 * Crash tests: runs an ES module `source` in a child Node process (with tsx, so it can import the
 * project's TypeScript) that is expected to end itself with SIGKILL — no shutdown hooks, no
 * flushes — and returns what it printed.
 */
import { spawn } from "node:child_process";

export interface KilledChild {
  stdout: string;
  stderr: string;
  signal: NodeJS.Signals | null;
}

export async function runUntilKilled(source: string): Promise<KilledChild> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("close", (_code, closedBy) => resolve(closedBy)),
  );
  return { stdout, stderr, signal };
}
