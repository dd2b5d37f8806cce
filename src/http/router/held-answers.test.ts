import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  DEFAULT_HELD_ANSWERS_BYTES,
  holdAnswer,
  readHeldAnswerBytes,
  setHeldAnswersBudget,
} from "./held-answers.js";

after(() => setHeldAnswersBudget(DEFAULT_HELD_ANSWERS_BYTES));

test("past the budget the answers waiting longest are let go, until the others fit", () => {
  setHeldAnswersBudget(100);
  const letGo: string[] = [];
  const releaseA = holdAnswer(40, () => letGo.push("a"));
  holdAnswer(40, () => letGo.push("b"));
  assert.equal(readHeldAnswerBytes(), 80);
  // 120 > 100: the oldest, a, goes; 80 left.
  const releaseC = holdAnswer(40, () => letGo.push("c"));
  assert.deepEqual(letGo, ["a"]);
  assert.equal(readHeldAnswerBytes(), 80);
  // a's own release afterwards (its connection's close) counts nothing twice.
  releaseA();
  assert.equal(readHeldAnswerBytes(), 80);
  // 150: b and c must both go for 70 to fit.
  const releaseD = holdAnswer(70, () => letGo.push("d"));
  assert.deepEqual(letGo, ["a", "b", "c"]);
  assert.equal(readHeldAnswerBytes(), 70);
  releaseC();
  releaseD();
  assert.equal(readHeldAnswerBytes(), 0);
});

test("an answer larger than the budget alone is kept, and a released one frees its bytes", () => {
  setHeldAnswersBudget(100);
  const letGo: string[] = [];
  const releaseBig = holdAnswer(500, () => letGo.push("big"));
  assert.equal(letGo.length, 0);
  assert.equal(readHeldAnswerBytes(), 500);
  // A newcomer lets the big one go and fits.
  const releaseSmall = holdAnswer(10, () => letGo.push("small"));
  assert.deepEqual(letGo, ["big"]);
  releaseBig();
  releaseSmall();
  assert.equal(readHeldAnswerBytes(), 0);
});
