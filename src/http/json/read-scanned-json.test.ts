import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import {
  DEFAULT_JSON_SHAPE_LIMITS,
  type JsonShapeLimits,
  MAX_JSON_DEPTH,
  SPAN_BYTES,
} from "./json-shape-scanner.js";
import { parseJsonBytes, parseScannedJson, scanJsonChunk, startJsonScan } from "./read-scanned-json.js";

/** Reads `text` sent in chunks of `chunkSize` bytes. */
async function read(text: string | Buffer, chunkSize = 65_536, limits = DEFAULT_JSON_SHAPE_LIMITS) {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const scan = startJsonScan(limits);
  for (let at = 0; at < bytes.length; at += chunkSize)
    scanJsonChunk(scan, bytes.subarray(at, at + chunkSize));
  return parseScannedJson(scan);
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => assert.fail("expected a refusal"),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof GatewayError, String(error));
  assert.equal(error.code, "invalid_request");
  return error;
}

function nest(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 1; level < depth; level++) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

const SAMPLES: unknown[] = [
  { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 16, stream: true, t: null },
  [1, -2.5e3, 0, true, false, null, "", '\u0000 \n \\ " / \ud83d\ude00 é 中'],
  "just a string",
  42,
  { __proto__: "own", constructor: 1, "1": "a", "0": "b", dup: 1 },
  { nested: nest(40, { deep: ["x"] }) },
];

test("bodies of every shape parse to what JSON.parse gives, however the bytes are split", async () => {
  for (const sample of SAMPLES) {
    const text = JSON.stringify(sample, null, sample === SAMPLES[0] ? 2 : undefined);
    for (const chunkSize of [1, 2, 3, 7, 64, 65_536]) {
      assert.deepEqual(
        await read(text, chunkSize),
        JSON.parse(text),
        `${text.slice(0, 40)} in ${chunkSize}-byte chunks`,
      );
    }
  }
  // A duplicated member: the last one wins, as with JSON.parse.
  assert.deepEqual(await read('{"a":1,"a":2}'), { a: 2 });
  const proto = (await read('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.keys(proto), ["__proto__"]);
});

test("large bodies are parsed piecewise to the same value", async () => {
  const longText = `${"héllo wörld ".repeat(200_000)}\ud83d\ude00`;
  const escaped = `${'line\n\t"quoted" \\ \u0001 \ud83d\ude00 '.repeat(60_000)}end`;
  const body = {
    model: "m",
    messages: Array.from({ length: 3_000 }, (_, index) => ({
      role: index % 2 === 0 ? "user" : "assistant",
      content: [{ type: "text", text: `turn ${index} ${"x".repeat(index % 50)}` }],
    })),
    long: longText,
    escaped,
    __proto__: [1, 2],
    tools: [{ name: "t", parameters: { type: "object", properties: { a: { type: "string" } } } }],
    numbers: Array.from({ length: 20_000 }, (_, index) => index * 1.5),
  };
  const text = JSON.stringify(body);
  assert.ok(text.length > 4 * SPAN_BYTES);
  for (const chunkSize of [1_000, 65_536]) {
    const parsed = (await read(text, chunkSize)) as Record<string, unknown>;
    assert.deepEqual(parsed, JSON.parse(text));
    assert.equal(parsed.long, longText);
    assert.equal(parsed.escaped, escaped);
  }
  // A raw control character is refused in a long string too, as JSON.parse refuses it.
  const half = "x".repeat(SPAN_BYTES);
  await refusal(read(Buffer.from(`{"long":"${half}\u0001${half}"}`)));
  assert.equal(
    ((await read(`{"long":"${half}\\u0001${half}"}`)) as { long: string }).long,
    `${half}\u0001${half}`,
  );
});

test("JSON up to the nesting limit passes; one level more is refused naming the path", async () => {
  // The body is the first level, `metadata`'s value the second.
  await read(JSON.stringify({ model: "m", metadata: nest(MAX_JSON_DEPTH) }));
  const error = await refusal(read(JSON.stringify({ model: "m", metadata: nest(MAX_JSON_DEPTH + 1) })));
  assert.ok(error.param?.startsWith("metadata"), String(error.param));
  assert.ok(error.message.startsWith(`${error.param} is nested more than 128 levels deep`), error.message);
  const deep = `{"tools":[{"parameters":${'{"p":'.repeat(100_000)}1${"}".repeat(100_000)}}]}`;
  assert.equal((await refusal(read(deep))).param, "tools[0].parameters.p");
});

test("5 MB of '[' is refused at the 129th byte, before the rest is even looked at", async () => {
  const scan = startJsonScan(DEFAULT_JSON_SHAPE_LIMITS);
  const started = performance.now();
  assert.throws(
    () => scanJsonChunk(scan, Buffer.alloc(5_000_000, "[")),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.match(error.message, /nested more than 128 levels/);
      assert.equal(error.param, "[0][0][0][0]");
      return true;
    },
  );
  assert.ok(performance.now() - started < 50);
});

test("members per object, items per array, names and strings are bounded, naming the field", async () => {
  const limits: JsonShapeLimits = {
    maxDepth: 8,
    maxMembers: 3,
    maxItems: 4,
    maxNameBytes: 8,
    maxStringBytes: 10,
  };
  await read('{"c":[1,2,3,4],"d":"0123456789","12345678":0}', 3, limits);
  const cases: Array<[string, string | null, RegExp]> = [
    ['{"a":1,"b":2,"c":3,"d":4}', null, /^The body has more than 3 members/],
    ['{"tools":[{"a":1,"b":2,"c":3,"d":4}]}', "tools[0]", /^tools\[0\] has more than 3 members/],
    ['{"messages":[1,2,3,4,5]}', "messages", /^messages has more than 4 items/],
    ['{"a":{"123456789":1}}', "a", /^a has a member name longer than 8 bytes/],
    ['{"a":[0,"01234567890"]}', "a[1]", /^a\[1\] is a string longer than 10 bytes/],
  ];
  for (const [text, param, message] of cases) {
    for (const chunkSize of [1, 65_536]) {
      const error = await refusal(read(text, chunkSize, limits));
      assert.equal(error.param, param, text);
      assert.match(error.message, message);
    }
  }
  // 100,000 members in one object: refused as the 10,001st arrives.
  const wide = `{"metadata":{${Array.from({ length: 100_000 }, (_, index) => `"k${index}":1`).join(",")}}}`;
  const error = await refusal(read(wide));
  assert.equal(error.param, "metadata");
  assert.match(error.message, /more than 10000 members/);
});

test("text that is not one JSON value is refused, as JSON.parse would", async () => {
  for (const text of [
    "",
    "   ",
    "{",
    '{"a":1',
    '{"a" 1}',
    '{"a":1,}',
    "[1,]",
    "[1 2]",
    '{"a":1}{}',
    '{"a":1}x',
    "}",
    '{"a":tru}',
    '{"a":01}',
    '["\\x"]',
    '["a\nb"]',
    "\ufeff{}",
  ]) {
    for (const chunkSize of [1, 65_536]) {
      const error = await refusal(read(text, chunkSize));
      assert.equal(error.param, null, JSON.stringify(text));
      assert.match(error.message, /not valid JSON|empty/, JSON.stringify(text));
    }
  }
});

test("a whole message (a WebSocket one) is read the same way", async () => {
  assert.deepEqual(await parseJsonBytes(Buffer.from('{"type":"x"}'), DEFAULT_JSON_SHAPE_LIMITS), {
    type: "x",
  });
  await refusal(parseJsonBytes(Buffer.from("[".repeat(1_000)), DEFAULT_JSON_SHAPE_LIMITS));
});
