import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isPermanentDatabaseError } from "../sql/classify-database-error.js";
import type { SqlClient } from "../sql/sql-client.js";
import { createPgliteClient, PGLITE_SETTINGS, type PgliteThread } from "./pglite-client.js";

const INSERT_MANY = `INSERT INTO items SELECT * FROM unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::boolean[], $5::text[])`;

for (const thread of ["main", "worker"] as const satisfies readonly PgliteThread[]) {
  describe(`SqlClient.run on PGlite (${thread} thread): a prepared statement`, () => {
    let client: SqlClient;
    before(async () => {
      client = await createPgliteClient("memory://", PGLITE_SETTINGS, thread);
      await client.executeScript(
        `CREATE TABLE items (id TEXT PRIMARY KEY, amount BIGINT NOT NULL CHECK (amount >= 0),
           at TIMESTAMPTZ, flag BOOLEAN, note TEXT)`,
      );
    });
    after(() => client.close());

    test("writes what query() would: quotes, backslashes, commas, braces, NULLs, unicode, dates, booleans", async () => {
      const at = new Date("2026-11-25T06:00:00.123Z");
      const notes = ['say "hi"', "back\\slash", "a,b", "{braces}", null, "NULL", "日本 ✓", ""];
      const ids = notes.map((_, index) => `text-${index}`);
      await client.run(INSERT_MANY, [
        ids,
        notes.map((_, index) => index * 1_000_000_007),
        notes.map((_, index) => (index === 2 ? null : at.toISOString())),
        notes.map((_, index) => index % 2 === 0),
        notes,
      ]);
      const rows = await client.query<{
        id: string;
        amount: number;
        at: Date | null;
        flag: boolean;
        note: string | null;
      }>("SELECT * FROM items WHERE id = ANY($1::text[]) ORDER BY id", [ids]);
      assert.deepEqual(
        rows.map((row) => [row.id, Number(row.amount), row.at?.toISOString() ?? null, row.flag, row.note]),
        notes.map((note, index) => [
          `text-${index}`,
          index * 1_000_000_007,
          index === 2 ? null : at.toISOString(),
          index % 2 === 0,
          note,
        ]),
      );
    });

    test("is parsed once and reused: one prepared statement however often it runs", async () => {
      for (let round = 0; round < 5; round++) {
        await client.run(INSERT_MANY, [[`reuse-${round}`], [round], [null], [true], ["x"]]);
      }
      const prepared = await client.query<{ statement: string }>(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO items%'",
      );
      assert.equal(prepared.length, 1);
      const [{ count }] = await client.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM items WHERE id LIKE 'reuse-%'",
      );
      assert.equal(count, 5);
    });

    test("a failing run throws the database's error with its SQLSTATE, writes nothing, and the next run works", async () => {
      await assert.rejects(
        client.run(INSERT_MANY, [
          ["bad-1", "bad-2"],
          [1, -1],
          [null, null],
          [true, true],
          ["a", "b"],
        ]),
        (error: Error) => {
          assert.equal((error as Error & { code?: string }).code, "23514");
          assert.ok(isPermanentDatabaseError(error));
          return true;
        },
      );
      await assert.rejects(
        client.run(INSERT_MANY, [["text-0"], [1], [null], [true], ["dup"]]),
        /duplicate key/,
      );
      await client.run(INSERT_MANY, [["after-error"], [1], [null], [false], ["ok"]]);
      const rows = await client.query<{ id: string }>(
        "SELECT id FROM items WHERE id IN ('bad-1', 'bad-2', 'after-error') ORDER BY id",
      );
      assert.deepEqual(
        rows.map((row) => row.id),
        ["after-error"],
      );
    });

    test("a run started during another caller's transaction waits for it instead of joining it", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inside!: () => void;
      const opened = new Promise<void>((resolve) => {
        inside = resolve;
      });
      const transaction = client
        .transaction(async (tx) => {
          await tx.query("INSERT INTO items (id, amount) VALUES ('tx-row', 1)");
          inside();
          await held;
          throw new Error("roll back");
        })
        .catch((error: Error) => error.message);
      await opened;
      const outside = client.run(INSERT_MANY, [["outside-tx"], [1], [null], [true], ["x"]]);
      release();
      assert.equal(await transaction, "roll back");
      await outside;
      const rows = await client.query<{ id: string }>(
        "SELECT id FROM items WHERE id IN ('tx-row', 'outside-tx') ORDER BY id",
      );
      assert.deepEqual(
        rows.map((row) => row.id),
        ["outside-tx"],
      );
    });

    test("inside a transaction, run is part of it", async () => {
      await assert.rejects(
        client.transaction(async (tx) => {
          await tx.run(INSERT_MANY, [["in-tx"], [1], [null], [true], ["x"]]);
          throw new Error("roll back");
        }),
        /roll back/,
      );
      const rows = await client.query("SELECT 1 FROM items WHERE id = 'in-tx'");
      assert.equal(rows.length, 0);
    });

    test("a wrong number of parameters is refused before anything runs", async () => {
      await assert.rejects(client.run(INSERT_MANY, [["short"], [1]]), /5 parameters, got 2/);
    });
  });
}
