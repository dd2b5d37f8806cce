import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import { readMigrations } from "../sql/migrate.js";
import { initializePgliteFolder } from "./initialize-pglite-folder.js";
import { createPgliteClient } from "./pglite-client.js";

test("a new embedded database is created and migrated by a child process, once", async (t) => {
  const folder = await createTempDir("pglite-init-");
  t.after(() => folder.cleanup());
  const pgliteDir = join(folder.path, "pglite");
  await initializePgliteFolder(pgliteDir);
  assert.ok(existsSync(join(pgliteDir, "PG_VERSION")), "initdb ran");

  const client = await createPgliteClient(pgliteDir);
  try {
    const applied = await client.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
    assert.deepEqual(
      applied.map((row) => row.name),
      (await readMigrations()).map((migration) => migration.name),
    );
  } finally {
    await client.close();
  }
  // An existing folder is left alone: no child, no second initdb.
  const startedAt = performance.now();
  await initializePgliteFolder(pgliteDir);
  assert.ok(performance.now() - startedAt < 50, "returns at once for an initialized folder");
});

test("a folder that cannot be created fails the start with the child's reason", async (t) => {
  const folder = await createTempDir("pglite-init-");
  t.after(() => folder.cleanup());
  const blocker = join(folder.path, "not-a-folder");
  await writeFile(blocker, "a file where the data folder should go");
  await assert.rejects(initializePgliteFolder(join(blocker, "pglite")), (error: unknown) => {
    assert.match((error as Error).message, /Creating the embedded database in .*not-a-folder\/pglite failed/);
    return true;
  });
});
