/**
 * Distributed mode: an admitted request's record is stored in Redis before its upstream is
 * called, instead of waiting for a PostgreSQL commit. Two reasons, one mechanism:
 * - visibility: a stream's id goes out with its headers, and from then on any instance must find
 *   its record; a Redis SET is one round trip, a commit an fsync behind whatever group
 *   commit was in flight;
 * - crash safety: if this instance dies mid-request, another one finds the record by age (the
 *   index `gen-in-progress`, scored by admission time) and settles it as interrupted
 *   (engine/interrupted-sweep.ts). A non-streamed request gets nothing else before its answer.
 *
 * - `admissionRecord` hands the record to the limit counters, which store it under
 *   `gen-in-progress:<id>` and list it in the indexes in the reservation's own script: admission
 *   and the record are one round trip. `start` then only writes a stream's row.
 * - without that (Redis out of reach at admission), `start` writes the record under
 *   `gen-in-progress:<id>` and lists it in the index, in one round trip, and resolves. A stream's row is still written, in the background (a crash leaves it behind
 *   as before); a non-streamed request writes no row until it is final. When Redis fails, `start`
 *   waits for the row instead (today's path, never a lost record).
 * - `get` reads PostgreSQL, then Redis, then PostgreSQL again: the Redis value is deleted only
 *   after the final row is committed, so a lookup that misses both the first read and the value
 *   finds the final row on the second read.
 * - `finish` first adds the outcome and the finish time to the value (not waited for: it leaves
 *   after the answer, and every instance's lookup then finds the record final before its row is
 *   committed; only the outcome is sent, the start stays where the admission put it), then
 *   deletes the value and its index entry once the final row is written (ids this instance stored,
 *   and ids the sweep found through `listInProgress`).
 * - `listInProgress` lists the records of both places: the index and the rows.
 * - a record carrying its instance's id is also listed in that instance's own index, which
 *   `listInProgressOf` reads: the sweep of an instance whose lease expired
 *   (engine/dead-instance-sweep.ts) finds its records there, whatever their age.
 */

import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import type { SharedState } from "../store.js";
import { decodeStart, toFinalRecord, toInProgressRecord } from "./record-views.js";

/** Outlives any request and its sweep by far; only the value of a record nobody settled expires. */
export const IN_PROGRESS_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const IN_PROGRESS_INDEX = "gen-in-progress";
/** The records of one instance, for the sweep of an instance whose lease expired. */
export const instanceIndexOf = (instanceId: string) => `gen-in-progress@${instanceId}`;

const keyOf = (id: string) => `gen-in-progress:${id}`;
const indexesOf = (instanceId: string | undefined) =>
  instanceId === undefined ? [IN_PROGRESS_INDEX] : [IN_PROGRESS_INDEX, instanceIndexOf(instanceId)];

export interface SharedInProgressOptions {
  /** A Redis call or a background row write failed (logged by the caller; nothing is lost). */
  onError(error: unknown, what: string, id: string): void;
}

export function withSharedInProgressRecords<T extends GenerationRepository>(
  inner: T,
  state: SharedState,
  options: SharedInProgressOptions,
): T {
  /**
   * Ids whose value this instance wrote (or the sweep listed) and has not deleted yet, with the
   * indexes they are listed in.
   */
  const announced = new Map<string, string[]>();

  const overrides: Pick<
    GenerationRepository,
    "admissionRecord" | "start" | "finish" | "get" | "listInProgress" | "listInProgressOf"
  > = {
    admissionRecord(record) {
      const key = keyOf(record.id);
      // `{"admittedAt":<ms>,"start":…,"at":…}`: the script writes the admission time in between.
      const startText = JSON.stringify(record);
      return {
        key,
        member: key,
        indexes: indexesOf(record.instanceId),
        valueBefore: '{"admittedAt":',
        valueAfter: `,"start":${startText},"at":${JSON.stringify(new Date())}}`,
        ttlMs: IN_PROGRESS_TTL_MS,
      };
    },

    async start(record, sharedWithReservation) {
      const written = record.stream ? inner.start(record) : undefined;
      if (sharedWithReservation === true) {
        announced.set(record.id, indexesOf(record.instanceId));
        written?.catch((error: unknown) => options.onError(error, "in-progress row not written", record.id));
        return;
      }
      const at = new Date();
      const admittedAt = (record.createdAt ?? at).getTime();
      try {
        await state.setIndexedValue(
          indexesOf(record.instanceId),
          keyOf(record.id),
          JSON.stringify({ start: record, at }),
          admittedAt,
          IN_PROGRESS_TTL_MS,
        );
      } catch (error) {
        options.onError(error, "in-progress record not shared through Redis", record.id);
        return written ?? inner.start(record); // Visible and safe once its row is committed.
      }
      announced.set(record.id, indexesOf(record.instanceId));
      written?.catch((error: unknown) => options.onError(error, "in-progress row not written", record.id));
    },

    async finish(id, outcome, start) {
      const indexes = announced.get(id);
      announced.delete(id);
      if (indexes !== undefined) {
        // Final for every instance's lookup from now on; the row follows in a batch. Sent on the
        // connection the delete below uses, so it can never land after it.
        state
          .extendObjectValue(keyOf(id), finalMembers(outcome))
          .catch((error: unknown) => options.onError(error, "final record not shared through Redis", id));
      }
      await inner.finish(id, outcome, start);
      if (indexes === undefined) return;
      state.deleteIndexedValue(indexes, keyOf(id)).catch((error: unknown) => {
        // The sweep finds it again and finds the row final; lookups read the row first anyway.
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
        if (decoded) {
          if (decoded.start.workspaceId !== workspaceId) return null;
          return decoded.outcome === undefined
            ? toInProgressRecord(decoded.start, decoded.at)
            : toFinalRecord(decoded.start, decoded.outcome, decoded.at);
        }
      }
      return inner.get(id, workspaceId);
    },

    async listInProgress(admittedBefore, limit) {
      const found = new Map<string, GenerationStart>();
      for (const start of await listIndex(IN_PROGRESS_INDEX, admittedBefore.getTime(), limit)) {
        found.set(start.id, start);
      }
      for (const start of await inner.listInProgress(admittedBefore, limit)) {
        if (!found.has(start.id)) found.set(start.id, start);
      }
      return [...found.values()];
    },

    async listInProgressOf(instanceId, limit) {
      return listIndex(instanceIndexOf(instanceId), Number.POSITIVE_INFINITY, limit);
    },
  };

  /** The records listed in `index` up to `maxScore`; whoever settles one deletes its value. */
  async function listIndex(index: string, maxScore: number, limit: number): Promise<GenerationStart[]> {
    let listed: Array<{ key: string; value: string | null }> = [];
    try {
      listed = await state.listIndexedValues(index, maxScore, limit);
    } catch (error) {
      options.onError(error, "in-progress records not listed from Redis", "");
    }
    const starts: GenerationStart[] = [];
    for (const { key, value } of listed) {
      const decoded = value === null ? null : decodeValue(value);
      if (decoded) {
        // Settled, but its row never written (its instance died in between): settled as it was.
        if (decoded.outcome !== undefined) decoded.start.settledWith = decoded.outcome;
        starts.push(decoded.start);
        announced.set(decoded.start.id, indexesOf(decoded.start.instanceId));
      } else {
        // Expired or unreadable: no start to settle it with (a stream's row is still found by age).
        void state.deleteIndexedValue([index, IN_PROGRESS_INDEX], key).catch(() => {});
      }
    }
    return starts;
  }
  return Object.assign({}, inner, overrides);
}

/**
 * What a settled record's value gains: `{…,"outcome":…,"finishedAt":…}`. `finishedAt`, not `at`:
 * `at` stays the time the value was first stored.
 */
function finalMembers(outcome: GenerationOutcome): string {
  return `"outcome":${JSON.stringify(outcome)},"finishedAt":${JSON.stringify(new Date())}`;
}

function decodeValue(
  value: string,
): { start: GenerationStart; at: Date; outcome?: GenerationOutcome } | null {
  try {
    const parsed = JSON.parse(value) as {
      start?: Record<string, unknown>;
      at?: string;
      finishedAt?: string;
      admittedAt?: number;
      outcome?: GenerationOutcome;
    };
    if (typeof parsed.start !== "object" || parsed.start === null || typeof parsed.at !== "string")
      return null;
    const start = decodeStart(parsed.start);
    // Stored with the reservation: the admission time came from the script.
    if (start.createdAt === undefined && typeof parsed.admittedAt === "number") {
      start.createdAt = new Date(parsed.admittedAt);
    }
    const decoded: { start: GenerationStart; at: Date; outcome?: GenerationOutcome } = {
      start,
      at: new Date(parsed.at),
    };
    if (typeof parsed.outcome === "object" && parsed.outcome !== null) {
      decoded.outcome = parsed.outcome;
      // Values written before `finishedAt` existed carry the finish time as `at`.
      if (typeof parsed.finishedAt === "string") decoded.at = new Date(parsed.finishedAt);
    }
    return decoded;
  } catch {
    return null;
  }
}
