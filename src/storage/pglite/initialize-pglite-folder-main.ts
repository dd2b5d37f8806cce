/**
 * Child entry of initialize-pglite-folder.ts: creates the PGlite folder given as the only argument
 * (initdb, with the gateway's settings) and applies the migrations, then exits, taking initdb's
 * memory with it.
 */
import { migrate } from "../sql/migrate.js";
import { createPgliteClient } from "./pglite-client.js";

const pgliteDir = process.argv[2];
if (!pgliteDir) throw new Error("usage: initialize-pglite-folder-main <pglite folder>");
const client = await createPgliteClient(pgliteDir);
try {
  await migrate(client);
} finally {
  await client.close();
}
