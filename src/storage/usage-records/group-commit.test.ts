import assert from "node:assert/strict";
import { test } from "node:test";
import { createGroupCommit } from "./group-commit.js";

test("group commit: a lone item is written at once, concurrent ones share writes", async () => {
  const writes: number[][] = [];
  let release: (() => void) | undefined;
  const commit = createGroupCommit<number>({
    maxBatch: 3,
    async write(items) {
      writes.push([...items]);
      // The first write stays in flight until released, so the next items queue behind it.
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  const first = commit.submit(1);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, [[1]], "written without waiting for company");
  const rest = [2, 3, 4, 5, 6].map((item) => commit.submit(item));
  release?.();
  await Promise.all([first, ...rest]);
  assert.deepEqual(writes, [[1], [2, 3, 4], [5, 6]], "queued items share writes of at most maxBatch");
});

test("group commit: one bad item fails alone; the others of its batch are written", async () => {
  const written: string[] = [];
  const commit = createGroupCommit<string>({
    maxBatch: 10,
    async write(items) {
      if (items.includes("bad")) throw new RangeError("bad item");
      written.push(...items);
    },
  });
  const results = await Promise.allSettled(["a", "bad", "b"].map((item) => commit.submit(item)));
  assert.deepEqual(
    results.map((result) => result.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof RangeError);
  assert.deepEqual(written.sort(), ["a", "b"]);
});

test("group commit: drain waits for writes in flight", async () => {
  let done = false;
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    async write() {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = true;
    },
  });
  void commit.submit(1);
  await commit.drain();
  assert.equal(done, true);
});

test("group commit: a queued item can be withdrawn before a write carries it", async () => {
  const writes: number[][] = [];
  let release: (() => void) | undefined;
  const commit = createGroupCommit<number>({
    maxBatch: 10,
    async write(items) {
      writes.push([...items]);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  const inFlight = commit.submit(1);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  const queued = [2, 3, 4].map((item) => commit.submit(item));
  assert.equal(
    commit.withdraw((item) => item === 3 || item === 1),
    1,
    "only the queued 3, not the in-flight 1",
  );
  release?.();
  await Promise.all([inFlight, ...queued]);
  assert.deepEqual(writes, [[1], [2, 4]]);
});
