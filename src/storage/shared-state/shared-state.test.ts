import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { test } from "node:test";
import { forEachSharedStateMode, requireMode, TEST_REDIS_URL } from "../../../test/helpers/storage-modes.js";
import { openSharedState } from "./shared-state.js";

function waitForMessages(count: number) {
  const received: string[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    received,
    done,
    onMessage(message: string) {
      received.push(message);
      if (received.length === count) resolve();
    },
  };
}

async function withDeadline<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result within ${milliseconds} ms`)), milliseconds);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

forEachSharedStateMode("publish reaches subscribers on another connection", async (context) => {
  const peer = await context.openPeer();
  await context.state.ping();
  const inbox = waitForMessages(2);
  const unsubscribe = await context.state.subscribe("gateway:key-changed", inbox.onMessage);
  await peer.publish("gateway:key-changed", JSON.stringify({ keyId: "key_1" }));
  await peer.publish("gateway:key-changed", "second");
  await withDeadline(inbox.done, 3_000);
  assert.deepEqual(inbox.received, ['{"keyId":"key_1"}', "second"]);

  await unsubscribe();
  await peer.publish("gateway:key-changed", "after unsubscribe");
  await sleep(200);
  assert.equal(inbox.received.length, 2);
});

forEachSharedStateMode("one throwing subscriber does not stop the others", async (context) => {
  const inbox = waitForMessages(1);
  await context.state.subscribe("channel", () => {
    throw new Error("boom");
  });
  await context.state.subscribe("channel", inbox.onMessage);
  await context.state.publish("channel", "hello");
  await withDeadline(inbox.done, 3_000);
  assert.deepEqual(inbox.received, ["hello"]);
});

test("Redis prefixes isolate channels", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const first = await openSharedState({ redisUrl: TEST_REDIS_URL, prefix: `gw_test_a_${process.pid}:` });
  const second = await openSharedState({ redisUrl: TEST_REDIS_URL, prefix: `gw_test_b_${process.pid}:` });
  try {
    const received: string[] = [];
    await second.subscribe("channel", (message) => received.push(message));
    const own = waitForMessages(1);
    await first.subscribe("channel", own.onMessage);
    await first.publish("channel", "for a only");
    await withDeadline(own.done, 3_000);
    await sleep(100);
    assert.deepEqual(received, []);
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
});

test("opening Redis when nothing listens: resolves within the connect deadline, says so, and fails fast until it answers", async () => {
  const started = Date.now();
  const errors: Error[] = [];
  const state = await openSharedState({
    redisUrl: "redis://127.0.0.1:1",
    onError: (error) => errors.push(error),
  });
  try {
    assert.ok(Date.now() - started < 3_000);
    assert.ok(
      errors.some((error) => /Redis not reachable at redis:\/\/127\.0\.0\.1:1/.test(error.message)),
      errors.map((error) => error.message).join("; "),
    );
    const pingStarted = Date.now();
    await assert.rejects(state.ping());
    assert.ok(Date.now() - pingStarted < 1_500, "commands fail within their deadline");
    // A subscription made meanwhile is kept for the first connection instead of failing.
    const unsubscribe = await state.subscribe("channel", () => {});
    await unsubscribe();
  } finally {
    await state.close();
  }
});

/** A TCP relay to the real Redis that can be made to swallow traffic, like a network partition. */
async function startRelay(): Promise<{
  url: string;
  partition(): void;
  dropConnections(): void;
  close(): Promise<void>;
}> {
  const target = new URL(TEST_REDIS_URL);
  const { connect } = await import("node:net");
  const sockets = new Set<Socket>();
  let partitioned = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => {
      if (!partitioned) upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (!partitioned) client.write(chunk);
    });
    const destroy = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", destroy).on("close", destroy);
    upstream.on("error", destroy).on("close", destroy);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    partition: () => {
      partitioned = true;
    },
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test("ping rejects within about a second when Redis stops answering", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const relay = await startRelay();
  const state = await openSharedState({ redisUrl: relay.url });
  try {
    await state.ping();
    relay.partition();
    const started = Date.now();
    await assert.rejects(state.ping());
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2_000, `ping took ${elapsed} ms to fail`);
    await assert.rejects(state.publish("channel", "x"));
  } finally {
    await state.close();
    await relay.close();
  }
});

test("ping rejects at once when the Redis connection is gone", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const relay = await startRelay();
  const state = await openSharedState({ redisUrl: relay.url });
  try {
    await relay.close();
    await sleep(50);
    const started = Date.now();
    await assert.rejects(state.ping());
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await state.close();
  }
});

test("in-process state refuses use after close", async () => {
  const state = await openSharedState({});
  assert.equal(state.mode, "in-process");
  await state.close();
  await assert.rejects(state.ping());
  await assert.rejects(state.publish("c", "m"));
});

test("subscriptions survive a dropped Redis connection", async (t) => {
  if (!(await requireMode(t, "redis"))) return;
  const relay = await startRelay();
  const prefix = `gw_test_reconnect_${process.pid}:`;
  const state = await openSharedState({ redisUrl: relay.url, prefix });
  const publisher = await openSharedState({ redisUrl: TEST_REDIS_URL, prefix });
  try {
    const inbox = waitForMessages(1);
    await state.subscribe("channel", inbox.onMessage);
    relay.dropConnections();
    // Publish until the reconnected subscriber has resubscribed and hears one.
    const deadline = Date.now() + 5_000;
    while (inbox.received.length === 0 && Date.now() < deadline) {
      await publisher.publish("channel", "after reconnect");
      await sleep(100);
    }
    assert.deepEqual(inbox.received.slice(0, 1), ["after reconnect"]);
    await state.ping();
  } finally {
    await Promise.all([state.close(), publisher.close()]);
    await relay.close();
  }
});

forEachSharedStateMode(
  "values: another connection reads what was set, until deleted or expired",
  async (context) => {
    const peer = await context.openPeer();
    await context.state.setValue("value:a", "first", 60_000);
    await context.state.setValue("value:a", "second", 60_000);
    assert.equal(await peer.getValue("value:a"), "second", "a set replaces the value");
    assert.equal(await peer.getValue("value:missing"), null);
    await peer.deleteValue("value:a");
    assert.equal(await context.state.getValue("value:a"), null);

    await context.state.setValue("value:short", "soon gone", 50);
    assert.equal(await peer.getValue("value:short"), "soon gone");
    await sleep(120);
    assert.equal(await peer.getValue("value:short"), null, "expired after its TTL");
  },
);

forEachSharedStateMode(
  "values set in one turn each keep their own value and expiry, and a removal asked for after a set in that turn wins",
  async (context) => {
    const peer = await context.openPeer();
    await context.state.setIndexedValue(["turn-index"], "turn:removed", "in progress", 100, 60_000);
    await Promise.all([
      context.state.setValue("turn:a", "A", 60_000),
      context.state.setValue("turn:short", "soon gone", 50),
      context.state.setValue("turn:b", "B", 60_000),
      context.state.setValue("turn:removed", "final", 60_000),
      context.state.deleteIndexedValue(["turn-index"], "turn:removed"),
    ]);
    assert.equal(await peer.getValue("turn:a"), "A");
    assert.equal(await peer.getValue("turn:b"), "B");
    assert.equal(await peer.getValue("turn:removed"), null, "the removal came after the set");
    assert.deepEqual(await peer.listIndexedValues("turn-index", 1_000, 10), []);
    await sleep(120);
    assert.equal(await peer.getValue("turn:short"), null, "expired after its own TTL");
    assert.equal(await peer.getValue("turn:a"), "A");
  },
);

forEachSharedStateMode(
  "an object value gains members in place: its expiry kept, in turn order with sets, never recreated once gone",
  async (context) => {
    const peer = await context.openPeer();
    await context.state.setValue("object:short", '{"start":1}', 150);
    await context.state.extendObjectValue("object:short", '"outcome":{"cost":7},"finishedAt":"later"');
    assert.deepEqual(JSON.parse((await peer.getValue("object:short"))!), {
      start: 1,
      outcome: { cost: 7 },
      finishedAt: "later",
    });
    await sleep(250);
    assert.equal(await peer.getValue("object:short"), null, "the expiry set with the value still holds");

    // One turn: a set, its extension, another extension, a removal after them; plus keys that must
    // stay as they are.
    await context.state.setIndexedValue(["object-index"], "object:removed", '{"a":1}', 100, 60_000);
    await context.state.setValue("object:text", "not an object", 60_000);
    await Promise.all([
      context.state.setValue("object:a", '{"a":1}', 60_000),
      context.state.extendObjectValue("object:a", '"b":2'),
      context.state.extendObjectValue("object:a", '"c":[3]'),
      context.state.extendObjectValue("object:missing", '"b":2'),
      context.state.extendObjectValue("object:text", '"b":2'),
      context.state.extendObjectValue("object:removed", '"b":2'),
      context.state.deleteIndexedValue(["object-index"], "object:removed"),
    ]);
    assert.deepEqual(JSON.parse((await peer.getValue("object:a"))!), { a: 1, b: 2, c: [3] });
    assert.equal(await peer.getValue("object:missing"), null, "an absent value is not created");
    assert.equal(await peer.getValue("object:text"), "not an object");
    assert.equal(await peer.getValue("object:removed"), null, "the removal came after the extension");

    // Alone in its turn, too.
    await context.state.extendObjectValue("object:a", '"d":"x"');
    assert.deepEqual(JSON.parse((await peer.getValue("object:a"))!), { a: 1, b: 2, c: [3], d: "x" });
    await context.state.extendObjectValue("object:removed", '"b":2');
    assert.equal(await peer.getValue("object:removed"), null);
  },
);

forEachSharedStateMode(
  "indexed values: listed by score, oldest first, up to a limit; an expired value lists as null; a delete removes both",
  async (context) => {
    const peer = await context.openPeer();
    await context.state.setIndexedValue(["index"], "rec:b", "B", 200, 60_000);
    await context.state.setIndexedValue(["index"], "rec:a", "A", 100, 60_000);
    await context.state.setIndexedValue(["index"], "rec:c", "C", 300, 60_000);
    await context.state.setIndexedValue(["index"], "rec:short", "gone", 150, 50);
    await sleep(120);
    assert.deepEqual(await peer.listIndexedValues("index", 250, 10), [
      { key: "rec:a", value: "A" },
      { key: "rec:short", value: null },
      { key: "rec:b", value: "B" },
    ]);
    assert.deepEqual(await peer.listIndexedValues("index", 1_000, 1), [{ key: "rec:a", value: "A" }]);
    await peer.deleteIndexedValue(["index"], "rec:a");
    assert.equal(await context.state.getValue("rec:a"), null);
    assert.deepEqual(
      (await context.state.listIndexedValues("index", 1_000, 10)).map((entry) => entry.key),
      ["rec:short", "rec:b", "rec:c"],
    );
  },
);

forEachSharedStateMode(
  "members: a touch scores a member with the store's clock and says whether it was listed; listed with scores until removed",
  async (context) => {
    const peer = await context.openPeer();
    const before = Date.now();
    const first = await context.state.touchMember("members", "a");
    assert.equal(first.wasListed, false);
    assert.ok(Math.abs(first.nowMs - before) < 5_000, "the store's clock, in Unix ms");
    await sleep(5);
    const second = await peer.touchMember("members", "a");
    assert.equal(second.wasListed, true);
    assert.ok(second.nowMs >= first.nowMs);
    await peer.touchMember("members", "b");
    const listed = (await context.state.listMembers("members")).sort((x, y) =>
      x.member.localeCompare(y.member),
    );
    assert.deepEqual(
      listed.map((entry) => entry.member),
      ["a", "b"],
    );
    assert.equal(listed[0].score, second.nowMs);
    await context.state.removeMember("members", "a");
    assert.deepEqual(
      (await peer.listMembers("members")).map((entry) => entry.member),
      ["b"],
    );
    assert.equal((await context.state.touchMember("members", "a")).wasListed, false);
  },
);

forEachSharedStateMode(
  "indexed values removed in one turn: each value and its entries in every index gone, the others kept, also after Redis dropped its scripts",
  async (context) => {
    const peer = await context.openPeer();
    const keys = Array.from({ length: 300 }, (_, index) => `rec:${index}`);
    for (const [index, key] of keys.entries()) {
      await context.state.setIndexedValue(["by-instance", "all"], key, `value ${index}`, index, 60_000);
    }
    // More than one script call holds (256): removed in two, both before the promises resolve.
    await Promise.all(
      keys.slice(0, 290).map((key) => context.state.deleteIndexedValue(["by-instance", "all"], key)),
    );
    for (const index of ["by-instance", "all"]) {
      assert.deepEqual(
        (await peer.listIndexedValues(index, 1_000, 100)).map((entry) => entry.key),
        keys.slice(290),
        `${index} lists what was not removed`,
      );
    }
    assert.equal(await peer.getValue("rec:0"), null);
    assert.equal(await peer.getValue("rec:289"), null);
    assert.equal(await peer.getValue("rec:290"), "value 290");

    if (context.mode !== "redis") return;
    // A restarted Redis has no scripts cached: the removal loads its script again.
    const { Redis } = await import("ioredis");
    const admin = new Redis(TEST_REDIS_URL);
    try {
      await admin.script("FLUSH");
    } finally {
      admin.disconnect();
    }
    await Promise.all(
      keys.slice(290).map((key) => context.state.deleteIndexedValue(["by-instance", "all"], key)),
    );
    assert.deepEqual(await peer.listIndexedValues("all", 1_000, 100), []);
    assert.equal(await peer.getValue("rec:299"), null);
  },
);
