import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeUtf8InSteps } from "./encode-in-steps.js";

test("a body encoded in steps is byte for byte what one encode gives, surrogate pairs across step edges included", async () => {
  const step = 1024 * 1024;
  // An emoji (a surrogate pair) straddling the first and second step edges, and multi-byte text.
  const text = `${"a".repeat(step - 1)}😀${"é".repeat(step)}😀${"z".repeat(10)}`;
  assert.deepEqual(await encodeUtf8InSteps(text), Buffer.from(text, "utf8"));
});

test("other requests' I/O runs between the steps", async () => {
  let ranBetween = false;
  const encoding = encodeUtf8InSteps("x".repeat(3 * 1024 * 1024));
  setImmediate(() => {
    ranBetween = true;
  });
  await encoding;
  assert.equal(ranBetween, true);
});
