/**
 * Random secrets the gateway keeps in its data folder (owner-only files): the embedded admin token
 * and, without INTERNAL_SHARED_SECRET, the root of the key that seals Responses item ids. A valid
 * existing secret is reused, so it survives restarts; whoever can read the data folder already
 * owns the database.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const SECRET_PATTERN = /^[0-9a-f]{64}$/;

/** null when the file is missing or does not hold a well-formed secret. */
export async function readDataDirSecret(dataDir: string, fileName: string): Promise<string | null> {
  try {
    const secret = (await readFile(join(dataDir, fileName), "utf8")).trim();
    return SECRET_PATTERN.test(secret) ? secret : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** The secret in `fileName`, created (32 random bytes, hex) when missing or malformed. */
export async function ensureDataDirSecret(dataDir: string, fileName: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, fileName);
  const existing = await readDataDirSecret(dataDir, fileName);
  if (existing) {
    await chmod(path, 0o600);
    return existing;
  }
  const secret = randomBytes(32).toString("hex");
  // Write-then-chmod: the mode argument is filtered by the umask and ignored for existing files.
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}
