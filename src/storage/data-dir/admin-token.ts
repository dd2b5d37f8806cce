/**
 * The admin token of embedded mode: with no INTERNAL_SHARED_SECRET configured, the gateway writes a
 * random token to `<dataDir>/admin-token` (owner-only) and the local admin CLI reads it to call the
 * admin API. Whoever can read the data folder already owns the database, so this grants nothing new.
 */
import { join } from "node:path";
import { ensureDataDirSecret, readDataDirSecret } from "./data-dir-secret.js";

export const ADMIN_TOKEN_FILE_NAME = "admin-token";

export function getAdminTokenPath(dataDir: string): string {
  return join(dataDir, ADMIN_TOKEN_FILE_NAME);
}

/** null when the file is missing or does not hold a well-formed token. */
export function readAdminToken(dataDir: string): Promise<string | null> {
  return readDataDirSecret(dataDir, ADMIN_TOKEN_FILE_NAME);
}

/** Reuses a valid existing token (so running CLIs keep working across restarts), else creates one. */
export function writeAdminToken(dataDir: string): Promise<string> {
  return ensureDataDirSecret(dataDir, ADMIN_TOKEN_FILE_NAME);
}
