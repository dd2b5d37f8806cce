import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createStreamTurns,
  STREAM_TURN_CHARS,
  STREAM_TURN_IDLE_MS,
  STREAM_TURN_SLOTS,
} from "./stream-turns.js";

/**
 * The turns' idle deadline runs on an unref'd timer (a server has its sockets to keep it alive);
 * a test waiting on it keeps the event loop alive itself.
 */
async function keepingLoopAlive<T>(promise: Promise<T>): Promise<T> {
  const alive = setInterval(() => {}, 1_000);
  try {
    return await promise;
  } finally {
    clearInterval(alive);
  }
}

/** Streams that hold every slot, and a way to release them. */
function occupyAllSlots() {
  const holders = Array.from({ length: STREAM_TURN_SLOTS }, () => createStreamTurns());
  for (const holder of holders) assert.equal(holder.take(1), undefined);
  const releaseAll = () => {
    for (const holder of holders) holder.release();
  };
  return { holders, releaseAll };
}

test("without another stream waiting a stream never waits, however much it works through", () => {
  const turns = createStreamTurns();
  for (let index = 0; index < 10; index++) assert.equal(turns.take(STREAM_TURN_CHARS), undefined);
  turns.awaitNetwork();
  assert.equal(turns.take(1), undefined);
  turns.release();
});

test("a stream waits while the slots are taken and goes on once one is released", async () => {
  const { holders, releaseAll } = occupyAllSlots();
  const waiter = createStreamTurns();
  let admitted = false;
  const wait = waiter.take(100);
  assert.ok(wait, "the slots are taken: the stream waits");
  void wait.then(() => {
    admitted = true;
  });
  await Promise.resolve();
  assert.equal(admitted, false);
  holders[0]!.release();
  await wait;
  assert.equal(admitted, true);
  waiter.release();
  releaseAll();
});

test("the stream served least so far goes first", async () => {
  const { releaseAll } = occupyAllSlots();
  const order: string[] = [];
  const light = createStreamTurns();
  const busy = createStreamTurns();
  const waits: Promise<void>[] = [];
  // A stream asking for much queues behind one asking for little, though it came first.
  const heavyWait = busy.take(STREAM_TURN_CHARS);
  const lightWait = light.take(10);
  assert.ok(heavyWait && lightWait);
  waits.push(
    heavyWait.then(() => void order.push("heavy")),
    lightWait.then(() => void order.push("light")),
  );
  releaseAll();
  await lightWait;
  light.release();
  await heavyWait;
  busy.release();
  await Promise.all(waits);
  assert.deepEqual(order, ["light", "heavy"]);
});

test("a turn whose stream does not come back goes to the next stream after the idle deadline", async () => {
  const { releaseAll } = occupyAllSlots();
  const waiter = createStreamTurns();
  const startedAt = performance.now();
  const wait = waiter.take(1);
  assert.ok(wait);
  await keepingLoopAlive(wait);
  const waited = performance.now() - startedAt;
  assert.ok(waited >= STREAM_TURN_IDLE_MS - 1, `waited ${waited.toFixed(1)} ms`);
  waiter.release();
  // The revoked holders' release is harmless.
  releaseAll();
  const next = createStreamTurns();
  assert.equal(next.take(1), undefined);
  next.release();
});

test("a stream going to wait for the network keeps its turn if its next chunk comes in the next loop turn", async () => {
  // A stream that has had a turn before (one that has not would end the holder's turn at once).
  const waiter = createStreamTurns();
  assert.equal(waiter.take(1), undefined);
  waiter.release();
  const { holders, releaseAll } = occupyAllSlots();
  const wait = waiter.take(1);
  assert.ok(wait);
  let admitted = false;
  void wait.then(() => {
    admitted = true;
  });
  // The first holder's next chunk arrives before two setImmediates: it keeps its turn (unless
  // the machine is so busy that the idle deadline passed meanwhile, which ends any turn).
  holders[0]!.awaitNetwork();
  const cameBackAt = performance.now();
  assert.equal(holders[0]!.take(1), undefined);
  await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
  await sleep(0);
  if (performance.now() - cameBackAt < STREAM_TURN_IDLE_MS / 2) assert.equal(admitted, false);
  // Its next chunk does not come: the turn goes to the waiting stream.
  holders[0]!.awaitNetwork();
  await keepingLoopAlive(wait);
  assert.equal(admitted, true);
  waiter.release();
  releaseAll();
});

test("a stream that has not had a turn yet ends the current turn at the holder's next piece", async () => {
  const { holders, releaseAll } = occupyAllSlots();
  const fresh = createStreamTurns();
  const wait = fresh.take(100);
  assert.ok(wait);
  // The holder has used little of its characters, but a new answer waits for its first part.
  const holderWait = holders[0]!.take(1);
  assert.ok(holderWait, "the holder queues again");
  await wait;
  // Once the new stream has had its turn, the holder's backlog goes on.
  fresh.release();
  await holderWait;
  holders[0]!.release();
  releaseAll();
});
