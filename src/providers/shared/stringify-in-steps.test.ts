import assert from "node:assert/strict";
import { test } from "node:test";
import { serialiseBodyInSteps, stringifyInSteps } from "./stringify-in-steps.js";

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

test("600 objects of 1,000 members: the JSON.stringify text, made while other work runs", async () => {
  const metadata: Record<string, Record<string, unknown>> = {};
  for (let object = 0; object < 600; object++) {
    const members: Record<string, unknown> = {};
    for (let member = 0; member < 1_000; member++) {
      members[`k${member}`] = member % 7 === 0 ? [member, null, { deep: "é" }] : `v${object}.${member}`;
    }
    metadata[`o${object}`] = members;
  }
  const body = { model: "m", metadata, skipped: undefined };
  // A timer that fires while the text is made: the loop was let through more than once.
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const [bytes, text] = [await serialiseBodyInSteps(body), await stringifyInSteps(metadata)];
  clearInterval(ticker);
  assert.ok(Buffer.isBuffer(bytes));
  assert.equal(bytes.toString("utf8"), JSON.stringify(body));
  assert.equal(text, JSON.stringify(metadata));
  assert.ok(ticks > 2, `timers ran ${ticks} times meanwhile`);
  assert.equal(await stringifyInSteps({ a: [1, "b"] }), '{"a":[1,"b"]}');
});
