/**
 * Applies `migrations/NNNN-name.sql` in name order, each once. Everything runs in one transaction
 * holding a transaction-scoped advisory lock, so instances starting together apply the files once
 * (the others wait, then find them recorded) and a failed file leaves no half-applied schema.
 */
import { readdir, readFile } from "node:fs/promises";
import type { SqlClient } from "./sql-client.js";

const MIGRATIONS_DIRECTORY = new URL("./migrations/", import.meta.url);
const MIGRATION_FILE_PATTERN = /^\d{4}-[a-z0-9-]+\.sql$/;
/** Arbitrary constant shared by every instance: the advisory lock of the migrator. */
const MIGRATION_LOCK_KEY = 748_215_903_117;
/** DDL may wait for locks longer than the ordinary statement deadline. */
const MIGRATION_STATEMENT_TIMEOUT = "120s";

export interface Migration {
  name: string;
  sql: string;
}

export async function readMigrations(directory: URL = MIGRATIONS_DIRECTORY): Promise<Migration[]> {
  const names = (await readdir(directory)).filter((name) => MIGRATION_FILE_PATTERN.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({ name, sql: await readFile(new URL(name, directory), "utf8") })),
  );
}

/** Returns the names applied by this call (empty when the schema was already current). */
export async function migrate(client: SqlClient, migrations?: Migration[]): Promise<string[]> {
  const pending = migrations ?? (await readMigrations());
  return client.transaction(async (tx) => {
    await tx.query(`SET LOCAL statement_timeout = '${MIGRATION_STATEMENT_TIMEOUT}'`);
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name TEXT PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const rows = await tx.query<{ name: string }>("SELECT name FROM schema_migrations");
    const applied = new Set(rows.map((row) => row.name));
    const appliedNow: string[] = [];
    for (const migration of pending) {
      if (applied.has(migration.name)) continue;
      try {
        await tx.executeScript(migration.sql);
      } catch (error) {
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [migration.name]);
      appliedNow.push(migration.name);
    }
    return appliedNow;
  });
}
