/**
 * Creates a new embedded database folder in a child process. PGlite's initdb grows the process's
 * memory to several times its working size and leaves a large part of it behind for good (closing
 * and reopening PGlite in the same process does not give it back:
 * docs/decisions/0037-initdb-in-child-process.md). Done in a short-lived child, the gateway's first
 * start looks like every later one in memory.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A folder initdb completed in has this file (PostgreSQL's own marker). */
const INITIALIZED_MARKER = "PG_VERSION";
/** initdb plus migrations take seconds; a child that hangs must not hang the start. */
const CHILD_DEADLINE_MS = 120_000;

export async function initializePgliteFolder(pgliteDir: string): Promise<void> {
  if (existsSync(join(pgliteDir, INITIALIZED_MARKER))) return;
  // Under tsx (tests, the CLI) this module is TypeScript and so is its child's entry.
  const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const entry = fileURLToPath(new URL(`./initialize-pglite-folder-main${extension}`, import.meta.url));
  // tsx by its resolved location: `--import tsx` would be resolved from the working directory,
  // which for `npx gateway-admin` may be anywhere.
  const args =
    extension === ".ts" ? ["--import", import.meta.resolve("tsx"), entry, pgliteDir] : [entry, pgliteDir];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_DEADLINE_MS);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    if (code !== 0) {
      throw new Error(
        `Creating the embedded database in ${pgliteDir} failed (${signal ?? `exit ${code}`}): ${stderr}`,
      );
    }
  } finally {
    clearTimeout(timer);
  }
}
