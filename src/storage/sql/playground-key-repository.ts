/**
 * One-time playground keys. A key is an api_keys row (so admission and
 * billing need nothing special) plus a playground_keys row holding the one-time state. Every rule
 * that must hold across instances is decided by PostgreSQL, on its own clock:
 * - minting takes a per-user advisory lock, counts the user's mints in the window and inserts, so
 *   concurrent mints on any number of instances cannot exceed the limit;
 * - consuming is one conditional UPDATE (`consumed_at IS NULL AND expires_at > now`), so exactly
 *   one request wins however many race for the key;
 * - purging deletes expired keys; usage records keep their key id (no foreign key there).
 */

import { createUnknownWorkspaceError } from "../../admin/workspace-errors.js";
import type { PlaygroundKeyRepository } from "../../auth/ports.js";
import { createApiKeyRepository } from "./api-key-repository.js";
import type { SqlClient } from "./sql-client.js";

/** Namespace of the two-integer advisory locks of minting (distinct from the migrator's lock). */
const MINT_LOCK_NAMESPACE = 0x706b6579; // "pkey"
/** Rows per purge statement: short statements keep row locks brief on a busy table. */
const PURGE_BATCH_SIZE = 500;
/** Bounds one purge run; the next run continues where this one stopped. */
const PURGE_MAX_BATCHES = 100;

interface WindowRow {
  minted: number;
  oldest: Date | string | null;
  now: Date | string;
}

export function createPlaygroundKeyRepository(client: SqlClient): PlaygroundKeyRepository {
  return {
    mint(input) {
      return client.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [
          MINT_LOCK_NAMESPACE,
          input.userId,
        ]);
        const [window] = await tx.query<WindowRow>(
          `SELECT count(*)::int AS minted, min(created_at) AS oldest, clock_timestamp() AS now
           FROM playground_keys
           WHERE user_id = $1 AND created_at > clock_timestamp() - $2::double precision * interval '1 millisecond'`,
          [input.userId, input.windowMs],
        );
        const now = new Date(window.now);
        if (window.minted >= input.limit) {
          const oldest = window.oldest === null ? now : new Date(window.oldest);
          const freedAt = oldest.getTime() + input.windowMs;
          return {
            rateLimited: true as const,
            retryAfterSeconds: Math.max(1, Math.ceil((freedAt - now.getTime()) / 1000)),
          };
        }
        // Checked here rather than by the foreign key: a violation would abort the transaction
        // after the key row was half made, and the caller deserves a param-named error.
        const [workspace] = await tx.query("SELECT 1 FROM workspaces WHERE id = $1", [input.workspaceId]);
        if (!workspace) throw createUnknownWorkspaceError(input.workspaceId, "workspace_id");
        const expiresAt = new Date(now.getTime() + input.ttlMs);
        const { key, secret } = await createApiKeyRepository(tx).create({
          workspaceId: input.workspaceId,
          name: input.source,
          memberId: input.userId,
          expiresAt,
          source: input.source,
        });
        await tx.query(
          `INSERT INTO playground_keys (key_id, workspace_id, user_id, source, expires_at)
           VALUES ($1, $2, $3, $4, $5)`,
          [key.id, input.workspaceId, input.userId, input.source, expiresAt],
        );
        return { secret, keyId: key.id, expiresAt, source: input.source };
      });
    },

    async consume(keyId) {
      const rows = await client.query(
        `UPDATE playground_keys SET consumed_at = clock_timestamp()
         WHERE key_id = $1 AND consumed_at IS NULL AND expires_at > clock_timestamp()
         RETURNING key_id`,
        [keyId],
      );
      return rows.length === 1;
    },

    async purgeExpired() {
      let purged = 0;
      for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
        const rows = await client.query(
          `DELETE FROM api_keys WHERE id IN (
             SELECT id FROM api_keys
             WHERE source <> 'api' AND expires_at <= clock_timestamp()
             LIMIT ${PURGE_BATCH_SIZE})
           RETURNING id`,
        );
        purged += rows.length;
        if (rows.length < PURGE_BATCH_SIZE) break;
      }
      return purged;
    },
  };
}
