/**
 * PGlite is a single-process database: two processes opening one data folder corrupt it. A pid
 * file next to it turns that mistake (e.g. the admin CLI in direct mode while a gateway runs on
 * another port) into a clear error.
 */
import { open, readFile, unlink } from "node:fs/promises";
import { resolve } from "node:path";

export const LOCK_FILE_NAME = "pglite.lock";
/** The pid file cannot tell two opens within this process apart; this set can. */
const lockedInThisProcess = new Set<string>();

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Returns the release function. */
export async function acquireDataDirLock(dataDir: string): Promise<() => Promise<void>> {
  const path = resolve(dataDir, LOCK_FILE_NAME);
  if (lockedInThisProcess.has(path)) {
    throw new Error(`The data folder ${dataDir} is already open in this process`);
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      lockedInThisProcess.add(path);
      return async () => {
        lockedInThisProcess.delete(path);
        await unlink(path).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const pid = Number((await readFile(path, "utf8").catch(() => "")).trim());
    // Our own pid means a previous incarnation (e.g. pid 1 in a restarted container) left it behind.
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid)) {
      throw new Error(
        `The data folder ${dataDir} is in use by process ${pid} (a running gateway?). Stop it, or ` +
          `use the gateway's admin API. If no such process uses it, delete ${path}.`,
      );
    }
    await unlink(path).catch(() => {});
  }
  throw new Error(`Could not lock the data folder ${dataDir}`);
}
