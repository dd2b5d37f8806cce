/**
 * Whether the database can serve right now, and the one client every repository goes through so
 * that an outage costs a caller at most one short deadline (docs/operations.md):
 *
 * - Each `query` and `run` is given up after `deadlineMs` (the pool's connect timeout is the same
 *   deadline, so no caller queues for a connection longer). Transactions and scripts get no
 *   client-side deadline (giving up on a commit that may still happen would make an admin change
 *   look failed when it was not); the statement timeout bounds them.
 * - A failure that says the database is unreachable or silent (classify-database-error.ts) is
 *   answered with the dependency-outage error (`rate_limit_exceeded`, Retry-After) and triggers a
 *   ping. A failed ping marks the database down: every call then fails at once, without touching
 *   the pool, and a probe pings every `probeIntervalMs` until one succeeds; the database is up
 *   again from that moment, with no restart.
 * - Readiness (`ping`) is a real round trip with its own deadline each time, and moves the same
 *   state: /readyz and the request path agree, and follow the database within a probe interval.
 * - `prepare` (the migrations of a gateway that started while the database was unreachable) runs
 *   before the first successful ping; until it has succeeded the database counts as down.
 */
import { createDatabaseUnavailableError } from "../../errors/dependency-errors.js";
import { withDeadline } from "../with-deadline.js";
import { isDatabaseUnavailableError } from "./classify-database-error.js";
import type { SqlClient, SqlParameter } from "./sql-client.js";

export const DEFAULT_DATABASE_DEADLINE_MS = 2_000;
export const DATABASE_PING_DEADLINE_MS = 1_000;
export const DATABASE_PROBE_INTERVAL_MS = 500;

export interface DatabaseAvailabilityOptions {
  /** The unguarded client: pings and `prepare` use it. */
  client: SqlClient;
  /** Deadline of each `query` and `run` through a guarded client. */
  deadlineMs?: number;
  pingDeadlineMs?: number;
  probeIntervalMs?: number;
  /** Runs until it succeeds once, before a ping may succeed (migrations deferred at start). */
  prepare?: () => Promise<void>;
  /** The database went down (with why) or came back. */
  onChange?: (available: boolean, cause?: unknown) => void;
}

export interface DatabaseAvailability {
  readonly available: boolean;
  /** A round trip within the ping deadline (preparation first, until done); moves the state. */
  ping(): Promise<void>;
  /** `client` (or a transaction's) with the deadlines and the fast failure while down. */
  guard(client: SqlClient): SqlClient;
  /** Stops the probe. */
  close(): void;
}

export function createDatabaseAvailability(options: DatabaseAvailabilityOptions): DatabaseAvailability {
  const deadlineMs = options.deadlineMs ?? DEFAULT_DATABASE_DEADLINE_MS;
  const pingDeadlineMs = options.pingDeadlineMs ?? DATABASE_PING_DEADLINE_MS;
  const probeIntervalMs = options.probeIntervalMs ?? DATABASE_PROBE_INTERVAL_MS;
  let prepared = options.prepare === undefined;
  let available = prepared;
  let lastCause: unknown = prepared ? undefined : new Error("the database has not been reached yet");
  let pinging: Promise<void> | undefined;
  let preparing: Promise<void> | undefined;
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  function markDown(cause: unknown): void {
    lastCause = cause;
    if (available) {
      available = false;
      options.onChange?.(false, cause);
    }
    scheduleProbe();
  }

  function markUp(): void {
    if (available) return;
    available = true;
    lastCause = undefined;
    clearTimeout(probe);
    probe = undefined;
    options.onChange?.(true);
  }

  function scheduleProbe(): void {
    if (closed || probe !== undefined) return;
    probe = setTimeout(() => {
      probe = undefined;
      ping().catch(() => {}); // A failure schedules the next probe.
    }, probeIntervalMs);
    probe.unref();
  }

  function prepare(): Promise<void> {
    preparing ??= options.prepare!().then(
      () => {
        prepared = true;
        preparing = undefined;
      },
      (error: unknown) => {
        preparing = undefined;
        throw error;
      },
    );
    return preparing;
  }

  function ping(): Promise<void> {
    pinging ??= (async () => {
      try {
        // Migrations may take longer than a ping: they go on in the background meanwhile, and
        // the database counts as down until they are done.
        if (!prepared) await withDeadline(prepare(), pingDeadlineMs, "database preparation");
        await withDeadline(options.client.query("SELECT 1"), pingDeadlineMs, "database ping");
        markUp();
      } catch (error) {
        markDown(error);
        throw error;
      } finally {
        pinging = undefined;
      }
    })();
    return pinging;
  }

  /** A call failed for a reason other than its statement: the ping decides whether we are down. */
  function noteFailure(): void {
    ping().catch(() => {});
  }

  function call<T>(work: () => Promise<T>, withClientDeadline: boolean): Promise<T> {
    if (!available) return Promise.reject(createDatabaseUnavailableError(lastCause));
    const attempt = withClientDeadline ? withDeadline(work(), deadlineMs, "database call") : work();
    return attempt.catch((error: unknown) => {
      if (!isDatabaseUnavailableError(error)) throw error;
      noteFailure();
      throw createDatabaseUnavailableError(error);
    });
  }

  if (!available) scheduleProbe();

  return {
    get available() {
      return available;
    },
    ping,
    guard(client) {
      return {
        query<T>(text: string, params?: readonly SqlParameter[]) {
          return call(() => client.query<T>(text, params), true);
        },
        run: (text, params) => call(() => client.run(text, params), true),
        executeScript: (text) => call(() => client.executeScript(text), false),
        transaction: (fn) => call(() => client.transaction(fn), false),
        close: () => client.close(),
      };
    },
    close() {
      closed = true;
      clearTimeout(probe);
      probe = undefined;
    },
  };
}
