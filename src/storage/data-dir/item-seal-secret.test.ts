import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import { IN_MEMORY_DATA_DIR } from "../open-store.js";
import { ITEM_SEAL_SECRET_FILE_NAME, readItemSealSecret } from "./item-seal-secret.js";

test("the item-seal secret: INTERNAL_SHARED_SECRET, else one kept in the data folder across restarts", async (t) => {
  const folder = await createTempDir();
  t.after(() => folder.cleanup());
  const warnings: string[] = [];
  const options = { dataDir: folder.path, distributed: false, warn: (text: string) => warnings.push(text) };
  assert.equal(await readItemSealSecret({ ...options, internalSharedSecret: "shared" }), "shared");
  const first = await readItemSealSecret(options);
  assert.match(String(first), /^[0-9a-f]{64}$/);
  assert.equal(await readItemSealSecret(options), first, "the same after a restart");
  assert.equal((await stat(join(folder.path, ITEM_SEAL_SECRET_FILE_NAME))).mode & 0o777, 0o600);
  assert.deepEqual(warnings, []);
  // Several instances without a shared secret: each seals with its own key, and is told so.
  await readItemSealSecret({ ...options, distributed: true });
  assert.match(warnings[0] ?? "", /INTERNAL_SHARED_SECRET is unset.*only on this instance/);
  const memory = await readItemSealSecret({ ...options, dataDir: IN_MEMORY_DATA_DIR });
  assert.ok(Buffer.isBuffer(memory) && memory.length === 32);
});
