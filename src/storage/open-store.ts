/**
 * Opens the store of either runtime mode: PostgreSQL when a database URL is given,
 * otherwise PGlite persisted under `<dataDir>/pglite`. Migrations run before the store is returned.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { acquireDataDirLock } from "./data-dir/data-dir-lock.js";
import { initializePgliteFolder } from "./pglite/initialize-pglite-folder.js";
import { createPgliteClient, PGLITE_SETTINGS, type PgliteThread } from "./pglite/pglite-client.js";
import { redactUrl } from "./redact-url.js";
import { createAlertRepository } from "./sql/alert-repository.js";
import { createApiKeyRepository } from "./sql/api-key-repository.js";
import { isDatabaseUnavailableError } from "./sql/classify-database-error.js";
import {
  createDatabaseAvailability,
  type DatabaseAvailability,
  DEFAULT_DATABASE_DEADLINE_MS,
} from "./sql/database-availability.js";
import { createKeyLimitRepository } from "./sql/key-limit-repository.js";
import { migrate } from "./sql/migrate.js";
import { createPlaygroundKeyRepository } from "./sql/playground-key-repository.js";
import type { SqlClient } from "./sql/sql-client.js";
import { createUsageReportRepository } from "./sql/usage-report-repository.js";
import { createWorkspaceRepository } from "./sql/workspace-repository.js";
import type { SharedState, Store } from "./store.js";
import {
  createDistributedRecorder,
  createDurableGenerationRepository,
  type DurableGenerationOptions,
  type OutboxEvent,
  type UsageRecorder,
} from "./usage-records/distributed-recorder.js";
import {
  createJournaledGenerationRepository,
  flushBefore,
  replayUsageJournal,
} from "./usage-records/embedded-recorder.js";
import { createGenerationRepository } from "./usage-records/generation-repository.js";
import { createBatchedGenerationRepository } from "./usage-records/group-commit.js";
import { createMemoryOutcomeOutbox, openFileOutcomeOutbox } from "./usage-records/outcome-outbox.js";
import { openUsageJournal, type UsageJournal } from "./usage-records/usage-journal.js";

export interface OpenStoreOptions {
  /** `postgres://…`; when absent the embedded PGlite database is used. */
  databaseUrl?: string;
  /** Embedded mode's folder (created when missing); `memory://` keeps everything in memory. */
  dataDir: string;
  statementTimeoutMs?: number;
  onError?: (error: Error) => void;
  /** Embedded mode: which thread runs PGlite (pglite/pglite-client.ts); default `main`. */
  pgliteThread?: PgliteThread;
  /** Deadline of each query on the request path (database-availability.ts). */
  deadlineMs?: number;
  /** The database became unreachable (with why) or reachable again. */
  onAvailabilityChange?: (available: boolean, cause?: unknown) => void;
  /**
   * PostgreSQL unreachable at open: return a store that is down and migrates once the database
   * answers (a gateway), instead of failing (the admin CLI, which has nothing to wait for).
   */
  openWhileUnreachable?: boolean;
  /**
   * Embedded: a usage-journal append failed (a full disk). The record still reaches the database
   * with its batch; it is lost only if the process dies first, so this must be reported.
   */
  onJournalError?: (error: unknown, requestId: string) => void;
  /**
   * PostgreSQL mode: the usage recorder will keep each record's copy in Redis (a gateway with a
   * Redis URL, `openUsageRecorder` with a Redis state). Only then may final records' group commits
   * wait for company: that copy answers every instance's lookups meanwhile.
   */
  recordCopiesInRedis?: boolean;
}

export const IN_MEMORY_DATA_DIR = "memory://";

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  return (await openStoreWithSqlClient(options)).store;
}

/** Also hands out the SQL client underneath, for tests and maintenance tasks that inspect tables. */
export async function openStoreWithSqlClient(
  options: OpenStoreOptions,
): Promise<{ store: Store; client: SqlClient }> {
  const availability = (client: SqlClient, prepare?: () => Promise<void>) =>
    createDatabaseAvailability({
      client,
      deadlineMs: options.deadlineMs,
      prepare,
      onChange: options.onAvailabilityChange,
    });
  if (options.databaseUrl) {
    const commitLingerMs = options.recordCopiesInRedis ? POSTGRES_COMMIT_LINGER_MS : 0;
    // Loaded only here: an embedded gateway never needs pg.
    const { createPostgresClient } = await import("./postgres/postgres-client.js");
    const client = createPostgresClient(options.databaseUrl, {
      statementTimeoutMs: options.statementTimeoutMs,
      // Waiting for a pooled connection is part of a call's deadline.
      connectionTimeoutMs: options.deadlineMs ?? DEFAULT_DATABASE_DEADLINE_MS,
      onError: options.onError,
    });
    try {
      await migrate(client);
    } catch (error) {
      if (!options.openWhileUnreachable || !isDatabaseUnavailableError(error)) {
        await client.close().catch(() => {});
        const message = `Could not open PostgreSQL at ${redactUrl(options.databaseUrl)}: ${(error as Error).message}`;
        throw new Error(message, { cause: error });
      }
      // Unreachable: the gateway starts without it (unready, requests answered with the
      // dependency-outage error) and migrates as soon as it answers.
      options.onAvailabilityChange?.(false, error);
      const deferred = availability(client, async () => {
        await migrate(client);
      });
      const store = createStore(client, "postgres", { availability: deferred, commitLingerMs });
      return { store, client: store.readClient };
    }
    const store = createStore(client, "postgres", { availability: availability(client), commitLingerMs });
    return { store, client: store.readClient };
  }
  const thread = options.pgliteThread ?? "main";
  if (options.dataDir === IN_MEMORY_DATA_DIR) {
    const client = await createPgliteClient(IN_MEMORY_DATA_DIR, PGLITE_SETTINGS, thread);
    return prepareStore(client, "embedded", async () => {}, undefined, availability(client));
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const release = await acquireDataDirLock(options.dataDir);
  try {
    const pgliteDir = join(options.dataDir, "pglite");
    await initializePgliteFolder(pgliteDir);
    const client = await createPgliteClient(pgliteDir, PGLITE_SETTINGS, thread);
    return await prepareStore(
      client,
      "embedded",
      release,
      join(options.dataDir, "journal"),
      availability(client),
      options.onJournalError,
    );
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * `journalDirectory` (embedded mode with a data folder, which one process owns): usage records
 * are journaled and written in batches (usage-records/embedded-recorder.ts); what an earlier
 * process journaled is written before the store is handed out.
 */
async function prepareStore(
  client: SqlClient,
  mode: Store["mode"],
  releaseLock: () => Promise<void>,
  journalDirectory: string | undefined,
  availability: DatabaseAvailability,
  onJournalError?: (error: unknown, requestId: string) => void,
): Promise<{ store: Store; client: SqlClient }> {
  let journal: UsageJournal | undefined;
  try {
    await migrate(client);
    if (journalDirectory) {
      journal = openUsageJournal(journalDirectory);
      await replayUsageJournal(createGenerationRepository(client), journal);
    }
  } catch (error) {
    journal?.close();
    await client.close().catch(() => {});
    throw error;
  }
  const store = createStore(client, mode, { releaseLock, journal, availability, onJournalError });
  return { store, client: store.readClient };
}

/**
 * How long a lone usage record waits for others before its PostgreSQL commit (group-commit.ts),
 * when its Redis copy exists. Nothing waits for it on the request path: that copy answers every
 * instance's lookups, and reads that must see it end the wait. A commit's client work, round trip
 * and settlement call are then shared by the records of these milliseconds at moderate rates too,
 * not only under saturation; the reservation is settled that much later. Without Redis another
 * instance could look a record up only in PostgreSQL, so nothing waits.
 */
const POSTGRES_COMMIT_LINGER_MS = 10;

export interface CreateStoreOptions {
  releaseLock?: () => Promise<void>;
  /** Embedded mode with a data folder: final records are journaled (embedded-recorder.ts). */
  journal?: UsageJournal;
  availability?: DatabaseAvailability;
  onJournalError?: (error: unknown, requestId: string) => void;
  /** How long a lone final or in-progress record waits for others before its commit (default 0). */
  commitLingerMs?: number;
}

/**
 * Every repository works through `availability`'s guard of `client` (deadlines, the dependency
 * error, fast failure while the database is down); `ping` is the availability's real round trip.
 */
export function createStore(
  rawClient: SqlClient,
  mode: Store["mode"],
  {
    releaseLock = async () => {},
    journal,
    availability = createDatabaseAvailability({ client: rawClient }),
    onJournalError,
    commitLingerMs = 0,
  }: CreateStoreOptions = {},
): Store & { readClient: SqlClient } {
  let closing: Promise<void> | undefined;
  const client = availability.guard(rawClient);
  const sqlGenerations = createGenerationRepository(client);
  const journaled = journal
    ? createJournaledGenerationRepository(sqlGenerations, journal, { onJournalError })
    : undefined;
  const batched = journaled
    ? undefined
    : createBatchedGenerationRepository(sqlGenerations, { lingerMs: commitLingerMs });
  const generations = journaled ?? batched!;
  // Every other read first waits for the final records handed over before it (the request that
  // asked was answered before its record was written): journaled, or submitted to a batch.
  const readClient = journaled
    ? flushBefore(client, () => journaled.drain())
    : flushBefore(client, () => batched!.finishedBefore());
  return {
    mode,
    // Both embedded repositories (batched, journaled) answer lookups for unwritten records.
    startedRecordsVisibleAtOnce: mode === "embedded",
    readClient,
    workspaces: createWorkspaceRepository(readClient),
    apiKeys: createApiKeyRepository(readClient),
    generations,
    playgroundKeys: createPlaygroundKeyRepository(readClient),
    keyLimits: createKeyLimitRepository(readClient),
    reports: createUsageReportRepository(readClient),
    alerts: createAlertRepository(readClient),
    ping: () => availability.ping(),
    close() {
      // Writes already submitted complete before the connection goes; with a journal, in-progress
      // records too (it is closed empty).
      availability.close();
      closing ??= (journaled ? journaled.close() : generations.drain())
        .then(() => rawClient.close())
        .finally(releaseLock);
      return closing;
    },
  };
}

export interface UsageRecorderOptions {
  /** The store's data folder: PostgreSQL mode parks records in `<dataDir>/outbox`. */
  dataDir: string;
  /** Redis: the PostgreSQL recorder keeps in-progress records there (decision 0316). */
  state: SharedState;
  onOutboxEvent?: (event: OutboxEvent) => void;
  /** A Redis call or a background row write failed (nothing is lost). */
  onSharedError?: (error: unknown, what: string, requestId: string) => void;
  /** Deadlines and retry pacing of the outbox (tests speed them up). */
  outbox?: Pick<
    DurableGenerationOptions,
    "finishDeadlineMs" | "idleCheckMs" | "retryInitialMs" | "retryMaxMs"
  >;
}

/**
 * The usage recorder of the store's mode (docs/durability.md). Embedded: the store's own
 * generations, whose journal is the one local log, replayed when the store opened. PostgreSQL:
 * group commits, the outbox on disk for outages with its replay, and, with Redis, the in-progress
 * records shared through it (usage-records/distributed-recorder.ts).
 */
export async function openUsageRecorder(store: Store, options: UsageRecorderOptions): Promise<UsageRecorder> {
  if (store.mode === "embedded") {
    await replayEarlierOutbox(store, options.dataDir);
    return Object.assign({}, store.generations, {
      replayParkedOutcomes: async () => ({ applied: 0, setAside: 0, remaining: 0 }),
      close: async () => {},
    });
  }
  const outbox =
    options.dataDir === IN_MEMORY_DATA_DIR
      ? createMemoryOutcomeOutbox()
      : await openFileOutcomeOutbox(join(options.dataDir, "outbox"));
  return createDistributedRecorder(store.generations, {
    outbox,
    ping: () => store.ping(),
    state: options.state,
    onEvent: options.onOutboxEvent,
    onSharedError: options.onSharedError ?? (() => {}),
    ...options.outbox,
  });
}

/**
 * Embedded data folders of earlier versions had an outbox as well: what one parked there is
 * written once, before serving, then the folder's replay is the journal's alone.
 */
async function replayEarlierOutbox(store: Store, dataDir: string): Promise<void> {
  if (dataDir === IN_MEMORY_DATA_DIR) return;
  const directory = join(dataDir, "outbox");
  const names = await readdir(directory).catch(() => [] as string[]);
  if (!names.some((name) => name === "pending.jsonl" || name.startsWith("replaying-"))) return;
  const earlier = createDurableGenerationRepository(store.generations, {
    outbox: await openFileOutcomeOutbox(directory),
    ping: () => store.ping(),
  });
  await earlier.replayNow().catch(() => {});
  await earlier.close();
}
