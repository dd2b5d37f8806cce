import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestOutcome } from "../../../test/helpers/generation-records.js";
import type { GenerationOutcome } from "../../engine/generation-record.js";
import type { GenerationRepository } from "../../engine/ports.js";
import { createDurableGenerationRepository, type OutboxEvent } from "./distributed-recorder.js";
import { createMemoryOutcomeOutbox } from "./outcome-outbox.js";

const OUTCOME: GenerationOutcome = createTestOutcome({
  tokensPrompt: 10,
  tokensCompletion: 5,
  costMicroUsd: 60,
  latencyMs: 12,
});

/** A database double: `mode` decides how finish and ping behave; applied outcomes are recorded once. */
function createFakeDatabase() {
  const database = {
    mode: "up" as "up" | "down" | "hang" | "poison",
    finishCalls: 0,
    applied: new Map<string, GenerationOutcome>(),
    repository: {
      async start() {},
      async get() {
        return null;
      },
      async finish(id: string, outcome: GenerationOutcome) {
        database.finishCalls++;
        if (database.mode === "down")
          throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        if (database.mode === "hang") return new Promise<void>(() => {});
        if (database.mode === "poison") throw new Error("cannot be finished");
        if (outcome.costMicroUsd < 0) throw new RangeError("costMicroUsd must not be negative");
        if (!database.applied.has(id)) database.applied.set(id, outcome);
      },
      async listInProgress() {
        return [];
      },
    } satisfies GenerationRepository,
    async ping() {
      if (database.mode === "down") throw new Error("down");
    },
  };
  return database;
}

function setup(overrides: { finishDeadlineMs?: number } = {}) {
  const database = createFakeDatabase();
  const outbox = createMemoryOutcomeOutbox();
  const events: OutboxEvent[] = [];
  const repository = createDurableGenerationRepository(database.repository, {
    outbox,
    ping: () => database.ping(),
    finishDeadlineMs: overrides.finishDeadlineMs ?? 200,
    onEvent: (event) => events.push(event),
  });
  return { database, outbox, events, repository };
}

test("durable finish: database down → parked; replayed exactly once when it returns", async () => {
  const { database, events, repository } = setup();
  database.mode = "down";
  await repository.finish("r1", OUTCOME);
  assert.deepEqual(
    events.map((event) => event.type),
    ["parked"],
  );
  const callsAfterFirst = database.finishCalls;
  await repository.finish("r2", OUTCOME);
  assert.equal(database.finishCalls, callsAfterFirst, "known-down database: parked without waiting on it");

  assert.deepEqual(await repository.replayNow(), { applied: 0, setAside: 0, remaining: 2 });
  database.mode = "up";
  assert.deepEqual(await repository.replayNow(), { applied: 2, setAside: 0, remaining: 0 });
  assert.deepEqual([...database.applied.keys()].sort(), ["r1", "r2"]);
  assert.deepEqual(await repository.replayNow(), { applied: 0, setAside: 0, remaining: 0 });

  await repository.finish("r3", OUTCOME);
  assert.ok(database.applied.has("r3"), "after a successful replay, finish writes directly again");
  await repository.close();
});

test("durable finish: a stalled database costs the request the deadline, then the outcome is parked", async () => {
  const { database, events, repository } = setup({ finishDeadlineMs: 50 });
  database.mode = "hang";
  const started = Date.now();
  await repository.finish("slow", OUTCOME);
  const waited = Date.now() - started;
  assert.ok(waited >= 45 && waited < 1_000, `waited ${waited} ms`);
  assert.equal(events[0]?.type, "parked");
  database.mode = "up";
  await repository.finish("next", OUTCOME);
  assert.ok(database.applied.has("next"), "slow is not down: the next outcome is written directly");
  assert.equal((await repository.replayNow()).applied, 1);
  await repository.close();
});

test("durable finish: an invalid outcome is an error for the caller, never parked", async () => {
  const { events, repository } = setup();
  await assert.rejects(repository.finish("bad", { ...OUTCOME, costMicroUsd: -1 }), RangeError);
  assert.deepEqual(events, []);
  await repository.close();
});

test("durable replay: an entry that fails while the database answers is set aside after 3 passes", async () => {
  const { database, outbox, events, repository } = setup();
  database.mode = "down";
  await repository.finish("poison", OUTCOME);
  await repository.finish("fine", OUTCOME);
  database.mode = "poison";
  assert.equal((await repository.replayNow()).remaining, 2);
  assert.equal((await repository.replayNow()).remaining, 2);
  const third = await repository.replayNow();
  assert.deepEqual(third, { applied: 0, setAside: 2, remaining: 0 });
  assert.equal(outbox.setAsideEntries.length, 2);
  assert.ok(events.some((event) => event.type === "set-aside"));
  await repository.close();
});
