import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { createTestOutcome } from "../../../test/helpers/generation-records.js";
import { createTempDir } from "../../../test/helpers/storage-modes.js";
import type { GenerationOutcome } from "../../engine/generation-record.js";
import {
  openFileOutcomeOutbox,
  type ParkedOutcome,
  PENDING_FILE_NAME,
  SET_ASIDE_FILE_NAME,
} from "./outcome-outbox.js";

const OUTCOME: GenerationOutcome = createTestOutcome({
  tokensPrompt: 10,
  tokensCompletion: 5,
  costMicroUsd: 60,
  latencyMs: 12,
});

const entry = (id: string): ParkedOutcome => ({ id, outcome: OUTCOME, parkedAt: new Date().toISOString() });

test("file outbox: parks survive as JSON lines; a claimed batch is handed out until completed", async () => {
  const dir = await createTempDir("gw-outbox-");
  try {
    const outbox = await openFileOutcomeOutbox(dir.path);
    await Promise.all(["a", "b", "c"].map((id) => outbox.park(entry(id))));
    const text = await readFile(join(dir.path, PENDING_FILE_NAME), "utf8");
    assert.equal(text.split("\n").filter((line) => line.trim() !== "").length, 3);

    const [first] = await outbox.claim();
    assert.deepEqual(first.entries.map((each) => each.id).sort(), ["a", "b", "c"]);
    assert.deepEqual(first.entries[0].outcome, OUTCOME);
    await outbox.park(entry("d"));
    const again = await outbox.claim();
    assert.equal(again.length, 2, "the unfinished batch comes back, plus the new one");
    for (const batch of again) await batch.complete();
    assert.deepEqual(await outbox.claim(), []);
    assert.deepEqual(
      (await readdir(dir.path)).filter((name) => name.endsWith(".jsonl")),
      [],
    );
    await outbox.close();
  } finally {
    await dir.cleanup();
  }
});

test("file outbox: a line torn by a crash is reported, the next park is not glued to it", async () => {
  const dir = await createTempDir("gw-outbox-");
  try {
    await writeFile(join(dir.path, PENDING_FILE_NAME), '{"v":1,"id":"torn","outc');
    const outbox = await openFileOutcomeOutbox(dir.path);
    await outbox.park(entry("whole"));
    const [batch] = await outbox.claim();
    assert.deepEqual(
      batch.entries.map((each) => each.id),
      ["whole"],
    );
    assert.deepEqual(batch.unreadable, ['{"v":1,"id":"torn","outc']);
    await outbox.setAside(batch.unreadable[0], "unreadable");
    const setAside = await readFile(join(dir.path, SET_ASIDE_FILE_NAME), "utf8");
    assert.match(setAside, /"reason":"unreadable"/);
  } finally {
    await dir.cleanup();
  }
});

test("file outbox: a new process adopts batches its predecessor claimed but never finished", async () => {
  const dir = await createTempDir("gw-outbox-");
  try {
    const crashed = await openFileOutcomeOutbox(dir.path);
    await crashed.park(entry("x"));
    await crashed.claim(); // claimed, then the process "dies" before completing
    await crashed.park(entry("y"));
    const restarted = await openFileOutcomeOutbox(dir.path);
    const batches = await restarted.claim();
    const ids = batches.flatMap((batch) => batch.entries.map((each) => each.id)).sort();
    assert.deepEqual(ids, ["x", "y"]);
  } finally {
    await dir.cleanup();
  }
});

test("file outbox: no park is lost while claims race with writes", async () => {
  const dir = await createTempDir("gw-outbox-");
  try {
    const writer = await openFileOutcomeOutbox(dir.path);
    const claimer = await openFileOutcomeOutbox(dir.path);
    await claimer.claim(); // past its start-up adoption: it now takes pending.jsonl only
    const seen = new Set<string>();
    const ids = Array.from({ length: 200 }, (_, index) => `id-${index}`);
    let parking = true;
    const parks = (async () => {
      for (let index = 0; index < ids.length; index += 4) {
        await Promise.all(ids.slice(index, index + 4).map((id) => writer.park(entry(id))));
      }
      parking = false;
    })();
    for (let round = 0; round < 10_000 && (parking || round === 0); round++) {
      // Far more often than the replayer ever claims (every 250 ms at most), to provoke the race.
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const batch of await claimer.claim()) {
        for (const each of batch.entries) seen.add(each.id);
        await batch.complete();
      }
    }
    await parks;
    for (const batch of await claimer.claim()) {
      for (const each of batch.entries) seen.add(each.id);
      await batch.complete();
    }
    assert.deepEqual(
      ids.filter((id) => !seen.has(id)),
      [],
      "every parked id was claimed",
    );
  } finally {
    await dir.cleanup();
  }
});
