/**
 * Opens the store of either runtime mode (DESIGN §2): PostgreSQL when a database URL is given,
 * otherwise PGlite persisted under `<dataDir>/pglite`. Migrations run before the store is returned.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createApiKeyRepository } from "./api-key-repository.js";
import { createBatchedGenerationRepository } from "./batched-generation-repository.js";
import { acquireDataDirLock } from "./data-dir-lock.js";
import { createGenerationRepository } from "./generation-repository.js";
import { initializePgliteFolder } from "./initialize-pglite-folder.js";
import {
  createJournaledGenerationRepository,
  flushBefore,
  replayUsageJournal,
} from "./journaled-generation-repository.js";
import { createKeyLimitRepository } from "./key-limit-repository.js";
import { migrate } from "./migrate.js";
import { createPlaygroundKeyRepository } from "./playground-key-repository.js";
import { redactUrl } from "./redact-url.js";
import { createPgliteClient, PGLITE_SETTINGS, type PgliteThread, type SqlClient } from "./sql-client.js";
import type { Store } from "./types.js";
import { openUsageJournal, type UsageJournal } from "./usage-journal.js";
import { createUsageReportRepository } from "./usage-report-repository.js";
import { createWorkspaceRepository } from "./workspace-repository.js";

export interface OpenStoreOptions {
  /** `postgres://…`; when absent the embedded PGlite database is used. */
  databaseUrl?: string;
  /** Embedded mode's folder (created when missing); `memory://` keeps everything in memory. */
  dataDir: string;
  statementTimeoutMs?: number;
  onError?: (error: Error) => void;
  /** Embedded mode: which thread runs PGlite (sql-client.ts); default `main`. */
  pgliteThread?: PgliteThread;
}

export const IN_MEMORY_DATA_DIR = "memory://";

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  return (await openStoreWithSqlClient(options)).store;
}

/** Also hands out the SQL client underneath, for tests and maintenance tasks that inspect tables. */
export async function openStoreWithSqlClient(
  options: OpenStoreOptions,
): Promise<{ store: Store; client: SqlClient }> {
  if (options.databaseUrl) {
    // Loaded only here: an embedded gateway never needs pg.
    const { createPostgresClient } = await import("./postgres-client.js");
    const client = createPostgresClient(options.databaseUrl, {
      statementTimeoutMs: options.statementTimeoutMs,
      onError: options.onError,
    });
    try {
      return await prepareStore(client, "postgres", async () => {});
    } catch (error) {
      const message = `Could not open PostgreSQL at ${redactUrl(options.databaseUrl)}: ${(error as Error).message}`;
      throw new Error(message, { cause: error });
    }
  }
  const thread = options.pgliteThread ?? "main";
  if (options.dataDir === IN_MEMORY_DATA_DIR) {
    const client = await createPgliteClient(IN_MEMORY_DATA_DIR, PGLITE_SETTINGS, thread);
    return prepareStore(client, "embedded", async () => {});
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const release = await acquireDataDirLock(options.dataDir);
  try {
    const pgliteDir = join(options.dataDir, "pglite");
    await initializePgliteFolder(pgliteDir);
    const client = await createPgliteClient(pgliteDir, PGLITE_SETTINGS, thread);
    return await prepareStore(client, "embedded", release, join(options.dataDir, "journal"));
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * `journalDirectory` (embedded mode with a data folder, which one process owns): usage records
 * are journaled and written in batches (journaled-generation-repository.ts); what an earlier
 * process journaled is written before the store is handed out.
 */
async function prepareStore(
  client: SqlClient,
  mode: Store["mode"],
  releaseLock: () => Promise<void>,
  journalDirectory?: string,
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
  const store = createStore(client, mode, releaseLock, journal);
  return { store, client: store.readClient };
}

export function createStore(
  client: SqlClient,
  mode: Store["mode"],
  releaseLock: () => Promise<void> = async () => {},
  journal?: UsageJournal,
): Store & { readClient: SqlClient } {
  let closing: Promise<void> | undefined;
  const sqlGenerations = createGenerationRepository(client);
  const journaled = journal ? createJournaledGenerationRepository(sqlGenerations, journal) : undefined;
  const generations = journaled ?? createBatchedGenerationRepository(sqlGenerations);
  // With a journal, every other read first waits for the final records journaled before it.
  const readClient = journaled ? flushBefore(client, () => journaled.drain()) : client;
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
    async ping() {
      await client.query("SELECT 1");
    },
    close() {
      // Writes already submitted complete before the connection goes; with a journal, in-progress
      // records too (it is closed empty).
      closing ??= (journaled ? journaled.close() : generations.drain())
        .then(() => client.close())
        .finally(releaseLock);
      return closing;
    },
  };
}
