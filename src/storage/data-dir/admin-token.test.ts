import assert from "node:assert/strict";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import { getAdminTokenPath, readAdminToken, writeAdminToken } from "./admin-token.js";

test("admin token: created owner-only, reused, and read back", async () => {
  const folder = await createTempDir();
  try {
    const dataDir = join(folder.path, "nested", "data");
    assert.equal(await readAdminToken(dataDir), null);
    const token = await writeAdminToken(dataDir);
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal((await stat(getAdminTokenPath(dataDir))).mode & 0o777, 0o600);
    assert.equal(await writeAdminToken(dataDir), token, "an existing token is reused");
    assert.equal(await readAdminToken(dataDir), token);
  } finally {
    await folder.cleanup();
  }
});

test("admin token: a damaged file is replaced", async () => {
  const folder = await createTempDir();
  try {
    await writeFile(getAdminTokenPath(folder.path), "not a token", { mode: 0o644 });
    assert.equal(await readAdminToken(folder.path), null);
    const token = await writeAdminToken(folder.path);
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal(await readAdminToken(folder.path), token);
    assert.equal((await stat(getAdminTokenPath(folder.path))).mode & 0o777, 0o600);
  } finally {
    await folder.cleanup();
  }
});
