/**
 * Where the gateway that holds a data folder listens. An embedded gateway writes its address to
 * `<dataDir>/gateway-url` once it listens and removes it when it stops, so the admin CLI, given
 * only the data folder, reaches that gateway through its admin API (whatever port it chose)
 * instead of opening the folder beside it. The pid in the folder's lock file says whether the
 * holder still runs.
 */
import { readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive, LOCK_FILE_NAME } from "./data-dir-lock.js";

export const GATEWAY_URL_FILE_NAME = "gateway-url";

/**
 * The address a local client reaches the gateway at: a wildcard listen address (`0.0.0.0`, `::`)
 * is reached on loopback.
 */
export function toLocalUrl(url: string): string {
  return url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:");
}

export async function writeGatewayUrl(dataDir: string, url: string): Promise<void> {
  const path = join(dataDir, GATEWAY_URL_FILE_NAME);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${toLocalUrl(url)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

export async function removeGatewayUrl(dataDir: string): Promise<void> {
  await unlink(join(dataDir, GATEWAY_URL_FILE_NAME)).catch(() => {});
}

export interface DataDirHolder {
  /** The live process holding the folder's lock. */
  pid: number;
  /** The address it wrote, when it wrote one (an older gateway, or one still starting, has none). */
  url?: string;
}

/** The running process that holds the data folder; undefined when none does. */
export async function findDataDirHolder(dataDir: string): Promise<DataDirHolder | undefined> {
  const pid = Number((await readFile(join(dataDir, LOCK_FILE_NAME), "utf8").catch(() => "")).trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isProcessAlive(pid)) return undefined;
  const url = (await readFile(join(dataDir, GATEWAY_URL_FILE_NAME), "utf8").catch(() => "")).trim();
  return { pid, url: /^https?:\/\/\S+$/.test(url) ? url : undefined };
}
