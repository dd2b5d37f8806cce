import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestDatabase, requireMode } from "../../../test/helpers/storage-modes.js";
import { isPermanentDatabaseError } from "../sql/classify-database-error.js";
import { createPostgresClient } from "./postgres-client.js";

const INSERT_MANY = "INSERT INTO items SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])";

test("PostgreSQL SqlClient.run: a named statement, prepared once per connection, with the effect of query()", async (t) => {
  if (!(await requireMode(t, "postgres"))) return;
  const database = await createTestDatabase();
  // One connection: every statement below shares the session whose prepared statements are listed.
  const client = createPostgresClient(database.url, { maxConnections: 1 });
  try {
    await client.executeScript(
      "CREATE TABLE items (id TEXT PRIMARY KEY, amount BIGINT NOT NULL CHECK (amount >= 0), note TEXT)",
    );
    const notes = ['say "hi"', "back\\slash", "a,b", "{braces}", null, "日本 ✓"];
    for (let round = 0; round < 3; round++) {
      await client.run(INSERT_MANY, [
        notes.map((_, index) => `r${round}-${index}`),
        notes.map((_, index) => index),
        notes,
      ]);
    }
    const prepared = await client.query<{ name: string }>(
      "SELECT name FROM pg_prepared_statements WHERE statement = $1",
      [INSERT_MANY],
    );
    assert.equal(prepared.length, 1);
    assert.match(prepared[0]?.name ?? "", /^gateway_[0-9a-f]{24}$/);
    const rows = await client.query<{ note: string | null }>(
      "SELECT note FROM items WHERE id LIKE 'r2-%' ORDER BY id",
    );
    assert.deepEqual(
      rows.map((row) => row.note),
      notes,
    );

    // A refused run keeps its SQLSTATE, writes nothing, and the prepared statement keeps working.
    await assert.rejects(client.run(INSERT_MANY, [["bad"], [-1], ["x"]]), (error: Error) => {
      assert.equal((error as Error & { code?: string }).code, "23514");
      assert.ok(isPermanentDatabaseError(error));
      return true;
    });
    await client.run(INSERT_MANY, [["after"], [1], ["ok"]]);
    const after = await client.query("SELECT id FROM items WHERE id IN ('bad', 'after')");
    assert.deepEqual(after, [{ id: "after" }]);
  } finally {
    await client.close();
    await database.drop();
  }
});
