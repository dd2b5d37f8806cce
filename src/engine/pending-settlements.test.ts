import assert from "node:assert/strict";
import { test } from "node:test";
import { PendingSettlements } from "./pending-settlements.js";

test("a refusal waits for the key's or workspace's pending settlements, at most its bound; none pending: no wait", async () => {
  const pending = new PendingSettlements();
  assert.equal(await pending.waitFor("key_a", "ws_a", 1_000), false);

  let finish!: () => void;
  const settling = new Promise<void>((resolve) => {
    finish = resolve;
  });
  pending.track("key_a", "ws_a", settling);
  let waited = false;
  const byKey = pending.waitFor("key_a", "ws_other", 5_000).then((result) => {
    waited = result;
  });
  const byWorkspace = pending.waitFor("key_other", "ws_a", 5_000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(waited, false, "still waiting while the settlement runs");
  finish();
  await byKey;
  assert.equal(waited, true);
  assert.equal(await byWorkspace, true);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await pending.waitFor("key_a", "ws_a", 1_000), false, "a finished settlement is forgotten");

  pending.track("key_b", "ws_b", new Promise<void>(() => {}));
  const started = performance.now();
  assert.equal(await pending.waitFor("key_b", "ws_b", 50), true);
  assert.ok(performance.now() - started < 1_000, "the bound holds for a settlement that never ends");
});

test("a refusal that crossed a settlement is asked again: one finished since the mark counts as waited for", async () => {
  const pending = new PendingSettlements();
  const mark = pending.mark();
  assert.equal(
    await pending.waitFor("key_a", "ws_a", 1_000, mark),
    false,
    "nothing finished: the refusal stands",
  );
  // The admission was asked; meanwhile a settlement of the key finished before the refusal came back.
  pending.track("key_a", "ws_a", Promise.resolve());
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await pending.waitFor("key_a", "ws_a", 1_000, mark), true);
  assert.equal(await pending.waitFor("key_a", "ws_a", 1_000, pending.mark()), false, "a new mark sees none");
});
