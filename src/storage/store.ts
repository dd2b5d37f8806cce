/**
 * What storage offers the code that wires the gateway together: one object implementing every
 * port its consumers declare (auth/ports.ts, engine/ports.ts, limits/ports.ts, admin/ports.ts).
 * Postgres (pg) and embedded PGlite share one SQL code path; SharedState has a Redis and an
 * in-process implementation.
 */
import type { ApiKeyRepository, UsageReportRepository, WorkspaceRepository } from "../admin/ports.js";
import type { AlertRepository } from "../alerts/ports.js";
import type { ApiKeyLookup, PlaygroundKeyRepository } from "../auth/ports.js";
import type { GenerationRepository } from "../engine/ports.js";
import type { KeyLimitRepository } from "../limits/ports.js";

export interface Store {
  readonly mode: "embedded" | "postgres";
  /**
   * A record given to `generations.start` is found by every lookup that can reach it at once,
   * before its write completes: true embedded, where the data folder's lock makes this instance
   * the only one and its repository answers for records not yet written. With PostgreSQL another
   * instance may be asked, so a caller that hands out the id first waits for the write.
   */
  readonly startedRecordsVisibleAtOnce: boolean;
  workspaces: WorkspaceRepository;
  apiKeys: ApiKeyRepository & ApiKeyLookup;
  generations: GenerationRepository;
  playgroundKeys: PlaygroundKeyRepository;
  keyLimits: KeyLimitRepository;
  reports: UsageReportRepository;
  /** Budget alerts: thresholds, webhooks, claims, deliveries. */
  alerts: AlertRepository;
  /** Round trip to the database; rejects when unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Cross-instance state (Redis, or in-process when REDIS_URL is unset). */
export interface SharedState {
  readonly mode: "redis" | "in-process";
  ping(): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  /** Stores `value` under `key` (prefixed like everything else) for `ttlMs`, replacing any value. */
  setValue(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Adds `members` (JSON object members, such as `"a":1,"b":[2]`) to the JSON object stored under
   * `key`, keeping its expiry, without sending the stored part again; nothing when the key is
   * absent or holds no object. In order with `setValue` calls, and before any `deleteIndexedValue`
   * asked for after it.
   */
  extendObjectValue(key: string, members: string): Promise<void>;
  /** null when absent or expired. */
  getValue(key: string): Promise<string | null>;
  deleteValue(key: string): Promise<void>;
  /**
   * `setValue`, and lists `key` in each sorted set of `indexes` under `score`, in one round trip:
   * values that must be found when their owner never deletes them (records of a crashed instance).
   */
  setIndexedValue(indexes: string[], key: string, value: string, score: number, ttlMs: number): Promise<void>;
  /** Up to `limit` keys of `index` scored at most `maxScore`, lowest first, with their values (null: expired). */
  listIndexedValues(
    index: string,
    maxScore: number,
    limit: number,
  ): Promise<Array<{ key: string; value: string | null }>>;
  /** Deletes `key` and its entry in each of `indexes`, in one round trip. */
  deleteIndexedValue(indexes: string[], key: string): Promise<void>;
  /**
   * Scores `member` in the sorted set `index` with the store's clock (Redis TIME): a heartbeat.
   * Returns that time and whether the member was listed before.
   */
  touchMember(index: string, member: string): Promise<{ nowMs: number; wasListed: boolean }>;
  /** Every member of `index` with its score. */
  listMembers(index: string): Promise<Array<{ member: string; score: number }>>;
  removeMember(index: string, member: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
