import assert from "node:assert/strict";
import { test } from "node:test";
import { serialiseBodyInSteps } from "./stringify-in-steps.js";

test("a body with long strings serialises to the bytes JSON.stringify gives", async () => {
  const long = `${"plain ".repeat(60_000)}"quoted" \\ \n\t\u0001 é 中 ${"\ud83d\ude00".repeat(150_000)}`;
  const bodies: unknown[] = [
    { model: "m", messages: [{ role: "user", content: long }], skipped: undefined, n: 1, f: () => 1 },
    [long, undefined, null, { when: new Date(0), nan: Number.NaN }, `${long.slice(0, 262_143)}\ud83d\ude00`],
    long,
  ];
  for (const body of bodies) {
    const serialised = await serialiseBodyInSteps(body);
    assert.ok(Buffer.isBuffer(serialised));
    assert.equal(serialised.toString("utf8"), JSON.stringify(body));
  }
});

test("a short body is the JSON text itself; a large one without long strings its bytes", async () => {
  assert.equal(await serialiseBodyInSteps({ a: [1, "b"] }), '{"a":[1,"b"]}');
  const many = { items: Array.from({ length: 40_000 }, (_, index) => `item ${index}`) };
  const serialised = await serialiseBodyInSteps(many);
  assert.ok(Buffer.isBuffer(serialised));
  assert.equal(serialised.toString("utf8"), JSON.stringify(many));
});
