import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { parseChatCompletionsBatches } from "../openai-compatible/parse-stream.js";
import { flattenBatches, parseEventBatches } from "./part-batches.js";
import { readSseEventBatches } from "./sse-reader.js";

async function* chunks(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const text of texts) yield new TextEncoder().encode(text);
}

const chunkFrame = (content: string) =>
  `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: { content } }] })}\n\n`;
const finishFrame = `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;

test("every frame of one network chunk is parsed in one go and leaves as one batch of parts", async () => {
  const body = chunks(
    Array.from({ length: 20 }, (_, i) => chunkFrame(`t${i}`)).join(""),
    `${finishFrame}data: [DONE]\n\n`,
  );
  const batches: CanonicalStreamPart[][] = [];
  for await (const batch of parseChatCompletionsBatches(readSseEventBatches(body))) batches.push(batch);
  assert.equal(batches.length, 2);
  const text = batches[0]
    .filter((part) => part.type === "text-delta")
    .map((part) => (part as { delta: string }).delta);
  assert.deepEqual(
    text,
    Array.from({ length: 20 }, (_, i) => `t${i}`),
  );
  assert.equal(batches[1].at(-1)?.type, "finish");
});

test("parts completed before a failure in the same batch are delivered before the failure is thrown", async () => {
  const seen: string[] = [];
  const batches = parseEventBatches(
    (async function* () {
      yield [{ data: "a" }, { data: "b" }, { data: "boom" }, { data: "never" }];
    })(),
    {
      accept(event, out) {
        if (event.data === "boom") throw new GatewayError("provider_unavailable", "bad frame");
        out.push({ type: "text-delta", id: "0", delta: event.data } as CanonicalStreamPart);
        return "more";
      },
      finish() {
        seen.push("finish");
      },
    },
  );
  const flat = flattenBatches(batches);
  assert.deepEqual((await flat.next()).value, { type: "text-delta", id: "0", delta: "a" });
  assert.deepEqual((await flat.next()).value, { type: "text-delta", id: "0", delta: "b" });
  await assert.rejects(flat.next(), /bad frame/);
  assert.deepEqual(seen, [], "a failed stream is not finished");
});

test("returning early from the flattened parts stops the batches' source", async () => {
  let stopped = false;
  const source = (async function* () {
    try {
      yield [1, 2, 3];
      yield [4];
    } finally {
      stopped = true;
    }
  })();
  const flat = flattenBatches(source);
  assert.equal((await flat.next()).value, 1);
  await flat.return(undefined);
  assert.equal(stopped, true);
  assert.equal((await flat.next()).done, true);
});

test("empty batches are skipped and the end of the source ends the flattened parts", async () => {
  const values: number[] = [];
  for await (const value of flattenBatches(
    (async function* () {
      yield [];
      yield [1];
      yield [];
      yield [2, 3];
    })(),
  ))
    values.push(value);
  assert.deepEqual(values, [1, 2, 3]);
});
