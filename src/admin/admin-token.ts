/**
 * The admin token of embedded mode: with no INTERNAL_SHARED_SECRET configured, the gateway writes a
 * random token to `<dataDir>/admin-token` (owner-only) and the local admin CLI reads it to call the
 * admin API. Whoever can read the data folder already owns the database, so this grants nothing new.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const ADMIN_TOKEN_FILE_NAME = "admin-token";
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export function getAdminTokenPath(dataDir: string): string {
  return join(dataDir, ADMIN_TOKEN_FILE_NAME);
}

/** null when the file is missing or does not hold a well-formed token. */
export async function readAdminToken(dataDir: string): Promise<string | null> {
  try {
    const token = (await readFile(getAdminTokenPath(dataDir), "utf8")).trim();
    return TOKEN_PATTERN.test(token) ? token : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Reuses a valid existing token (so running CLIs keep working across restarts), else creates one. */
export async function writeAdminToken(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = getAdminTokenPath(dataDir);
  const existing = await readAdminToken(dataDir);
  if (existing) {
    await chmod(path, 0o600);
    return existing;
  }
  const token = randomBytes(32).toString("hex");
  // Write-then-chmod: the mode argument is filtered by the umask and ignored for existing files.
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return token;
}
