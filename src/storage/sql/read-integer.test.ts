import assert from "node:assert/strict";
import { test } from "node:test";
import { readInteger, readNullableInteger } from "./read-integer.js";

test("readInteger accepts the forms pg and PGlite return", () => {
  assert.equal(readInteger("3000000000"), 3_000_000_000);
  assert.equal(readInteger("-42"), -42);
  assert.equal(readInteger(7), 7);
  assert.equal(readInteger(9_007_199_254_740_991n), Number.MAX_SAFE_INTEGER);
  assert.equal(readNullableInteger(null), null);
});

test("readInteger refuses values a JS number cannot hold exactly", () => {
  assert.throws(() => readInteger("9007199254740993"), RangeError);
  assert.throws(() => readInteger(9_007_199_254_740_993n), RangeError);
  assert.throws(() => readInteger(1.5), RangeError);
  assert.throws(() => readInteger("1.5"), TypeError);
  assert.throws(() => readInteger(null), TypeError);
});
