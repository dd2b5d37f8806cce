/**
 * Distributed mode: a stream's record becomes visible to every instance through Redis instead of
 * through its committed in-progress row. The record's id goes out with the stream's headers, and
 * from then on any instance must find it (DESIGN §4). Waiting for the row meant a PostgreSQL
 * commit (an fsync, behind whatever group commit was in flight) before the first byte of every
 * stream; a Redis SET is one round trip. The row is still written, in the background, so a crash
 * leaves it behind as before.
 *
 * - `start` writes the record under `gen-in-progress:<id>` (TTL: IN_PROGRESS_TTL_MS) and resolves;
 *   when Redis fails it waits for the row instead (today's path, never a lost record).
 * - `get` reads PostgreSQL, then Redis, then PostgreSQL again: the Redis value is deleted only
 *   after the final row is committed, so a lookup that misses both the first read and the value
 *   finds the final row on the second read.
 * - `finish` deletes the value after the final row is written (only for ids this instance
 *   announced: non-streamed requests never touch Redis here).
 */

import { toInProgressRecord } from "./in-progress-record.js";
import { decodeStart } from "./outcome-outbox.js";
import type { GenerationRepository, GenerationStart, SharedState } from "./types.js";

/** Outlives any stream by far; only the value of an instance that died before `finish` expires. */
export const IN_PROGRESS_TTL_MS = 60 * 60 * 1000;

const keyOf = (id: string) => `gen-in-progress:${id}`;

export interface SharedInProgressOptions {
  /** A Redis call or a background row write failed (logged by the caller; nothing is lost). */
  onError(error: unknown, what: string, id: string): void;
}

export function withSharedInProgressRecords<T extends GenerationRepository>(
  inner: T,
  state: SharedState,
  options: SharedInProgressOptions,
): T {
  /** Ids whose value this instance wrote and has not deleted yet. */
  const announced = new Set<string>();

  return {
    ...inner,
    async start(record) {
      const written = inner.start(record);
      const at = new Date();
      try {
        await state.setValue(keyOf(record.id), JSON.stringify({ start: record, at }), IN_PROGRESS_TTL_MS);
      } catch (error) {
        options.onError(error, "in-progress record not shared through Redis", record.id);
        return written; // Visible once its row is committed, as without Redis.
      }
      announced.add(record.id);
      written.catch((error: unknown) => options.onError(error, "in-progress row not written", record.id));
    },

    async finish(id, outcome, start) {
      const shared = announced.delete(id);
      await inner.finish(id, outcome, start);
      if (!shared) return;
      state.deleteValue(keyOf(id)).catch((error: unknown) => {
        // It expires on its own; lookups read the committed row first anyway.
        options.onError(error, "in-progress record not deleted from Redis", id);
      });
    },

    async get(id, workspaceId) {
      const stored = await inner.get(id, workspaceId);
      if (stored) return stored;
      let value: string | null = null;
      try {
        value = await state.getValue(keyOf(id));
      } catch (error) {
        options.onError(error, "in-progress record lookup in Redis failed", id);
      }
      if (value !== null) {
        const decoded = decodeValue(value);
        if (decoded)
          return decoded.start.workspaceId === workspaceId
            ? toInProgressRecord(decoded.start, decoded.at)
            : null;
      }
      return inner.get(id, workspaceId);
    },
  };
}

function decodeValue(value: string): { start: GenerationStart; at: Date } | null {
  try {
    const parsed = JSON.parse(value) as { start?: Record<string, unknown>; at?: string };
    if (typeof parsed.start !== "object" || parsed.start === null || typeof parsed.at !== "string")
      return null;
    return { start: decodeStart(parsed.start), at: new Date(parsed.at) };
  } catch {
    return null;
  }
}
