/**
 * The root secret of the key that seals Responses item ids (ingress/responses/item-seal.ts). Every
 * instance of a deployment must have the same one, or an id sealed by one instance is refused by
 * the others:
 * - INTERNAL_SHARED_SECRET when set (several instances share it already);
 * - else a secret kept in the data folder (`item-seal-secret`), which survives restarts: enough for
 *   the one instance of embedded mode;
 * - else (an in-memory data folder) a random one for this process.
 * Several instances without INTERNAL_SHARED_SECRET each have their own key: `warn` says so.
 */
import { randomBytes } from "node:crypto";
import { IN_MEMORY_DATA_DIR } from "../open-store.js";
import { ensureDataDirSecret } from "./data-dir-secret.js";

export const ITEM_SEAL_SECRET_FILE_NAME = "item-seal-secret";

export async function readItemSealSecret(options: {
  internalSharedSecret?: string;
  dataDir: string;
  /** PostgreSQL mode: more instances may serve the same clients. */
  distributed: boolean;
  warn(message: string): void;
}): Promise<string | Buffer> {
  if (options.internalSharedSecret) return options.internalSharedSecret;
  if (options.distributed) {
    options.warn(
      "INTERNAL_SHARED_SECRET is unset: Responses item ids are sealed with this instance's own key, " +
        "so item_reference to them resolves only on this instance; give every instance the same " +
        "INTERNAL_SHARED_SECRET",
    );
  }
  if (options.dataDir === IN_MEMORY_DATA_DIR) return randomBytes(32);
  return ensureDataDirSecret(options.dataDir, ITEM_SEAL_SECRET_FILE_NAME);
}
