import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { createDatabaseAvailability } from "./database-availability.js";
import type { SqlClient } from "./sql-client.js";

/** A client whose database answers, hangs or refuses connections, as the test says. */
function createFakeClient() {
  const state = { mode: "ok" as "ok" | "hang" | "refuse", calls: 0 };
  const answer = async <T>(): Promise<T[]> => {
    state.calls++;
    if (state.mode === "hang") return new Promise<T[]>(() => {});
    if (state.mode === "refuse")
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    return [];
  };
  const client: SqlClient = {
    query: answer,
    run: async () => {
      await answer();
    },
    executeScript: async () => {
      await answer();
    },
    transaction: (fn) => fn(client),
    close: async () => {},
  };
  return { client, state };
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function isOutageAnswer(error: unknown): boolean {
  return (
    error instanceof GatewayError && error.code === "rate_limit_exceeded" && error.retryAfterSeconds === 5
  );
}

test("a silent database: the call is given up at its deadline with the outage answer, then calls fail at once until a probe finds it back", async () => {
  const { client, state } = createFakeClient();
  const changes: boolean[] = [];
  const availability = createDatabaseAvailability({
    client,
    deadlineMs: 200,
    pingDeadlineMs: 100,
    probeIntervalMs: 100,
    onChange: (available) => changes.push(available),
  });
  const guarded = availability.guard(client);
  try {
    await guarded.query("SELECT 1");
    state.mode = "hang";
    const startedAt = Date.now();
    await assert.rejects(guarded.query("SELECT 1"), isOutageAnswer);
    const waited = Date.now() - startedAt;
    assert.ok(waited >= 190 && waited < 1_000, `waited ${waited} ms`);
    await pause(150); // the ping that followed fails within its deadline
    assert.equal(availability.available, false);
    assert.deepEqual(changes, [false]);

    const callsBefore = state.calls;
    const fastStartedAt = Date.now();
    await assert.rejects(guarded.run("UPDATE t SET x = 1", []), isOutageAnswer);
    await assert.rejects(
      guarded.transaction(async () => 1),
      isOutageAnswer,
    );
    assert.ok(Date.now() - fastStartedAt < 20, "no waiting while down");
    assert.equal(state.calls, callsBefore, "the database is not even asked");

    state.mode = "ok";
    await pause(400);
    assert.equal(availability.available, true, "a probe found it back");
    assert.deepEqual(changes, [false, true]);
    await guarded.query("SELECT 1");
  } finally {
    availability.close();
  }
});

test("refused connections mark the database down; readiness pings move the same state", async () => {
  const { client, state } = createFakeClient();
  const availability = createDatabaseAvailability({ client, probeIntervalMs: 60_000 });
  const guarded = availability.guard(client);
  try {
    state.mode = "refuse";
    await assert.rejects(guarded.query("SELECT 1"), isOutageAnswer);
    await assert.rejects(availability.ping());
    assert.equal(availability.available, false);
    state.mode = "ok";
    await availability.ping();
    assert.equal(availability.available, true);
  } finally {
    availability.close();
  }
});

test("errors about the statement, or of the caller's own code, pass through and change nothing", async () => {
  const { client } = createFakeClient();
  const failing: SqlClient = {
    ...client,
    query: async () => {
      throw Object.assign(new Error("duplicate key"), { code: "23505" });
    },
  };
  const availability = createDatabaseAvailability({ client: failing });
  const guarded = availability.guard(failing);
  try {
    await assert.rejects(guarded.query("INSERT …"), /duplicate key/);
    const own = new GatewayError("invalid_request", "no such workspace");
    await assert.rejects(
      guarded.transaction(async () => {
        throw own;
      }),
      (error) => error === own,
    );
    assert.equal(availability.available, true);
  } finally {
    availability.close();
  }
});

test("with a preparation (migrations deferred at start) the database counts as down until it succeeded", async () => {
  const { client } = createFakeClient();
  let attempts = 0;
  const availability = createDatabaseAvailability({
    client,
    probeIntervalMs: 50,
    prepare: async () => {
      attempts++;
      if (attempts < 3) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    },
  });
  try {
    assert.equal(availability.available, false);
    await assert.rejects(availability.guard(client).query("SELECT 1"), isOutageAnswer);
    await pause(400);
    assert.equal(attempts, 3, "retried by the probe until it succeeded, then not again");
    assert.equal(availability.available, true);
    await availability.ping();
    assert.equal(attempts, 3);
  } finally {
    availability.close();
  }
});
