/**
 * Work per delta does not grow with the answer so far (docs/performance.md, "Linear work per
 * answer"): for every stream parser (4 provider kinds), every stream encoder (3 formats, text,
 * reasoning, tool arguments, and content waiting behind another block), the fold of parts into a
 * non-streamed answer, the server-tool loop and the delivered-output estimate, 2N deltas must cost
 * at most 3 times what N cost (MAX_RATIO). Code that re-reads (slices, searches, compares) the text
 * so far at every delta costs 4 times as much and more: the Messages encoder did, and took seconds
 * for an ordinary long answer.
 *
 * Cost is the process's CPU time (user + system), not wall time, so a machine busy with other work
 * does not count; a cheap run is repeated to last at least 20 ms, each size is measured three times
 * and the cheapest counts, and a ratio over the bound (short of one no collection explains) gets up
 * to four more rounds of three, the cheapest of all counting.
 */
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { test } from "node:test";
import type { CanonicalStreamPart } from "../src/canonical/index.js";
import { createEmptyUsage } from "../src/canonical/index.js";
import type { Settlement } from "../src/canonical/settlement.js";
import { DeliveredOutput } from "../src/engine/meter-usage.js";
import type { ServerToolSession } from "../src/engine/ports.js";
import { ToolLoop } from "../src/engine/tool-loop.js";
import { createChatStreamEncoder } from "../src/ingress/chat-completions/stream-encoder.js";
import type { EncodeContext, StreamEncoder } from "../src/ingress/ingress-format.js";
import { createMessagesStreamEncoder } from "../src/ingress/messages/stream-encoder.js";
import { createItemSeal, deriveItemSealKey } from "../src/ingress/responses/item-seal.js";
import { createResponsesStreamEncoder } from "../src/ingress/responses/stream-encoder.js";
import { createAnthropicStreamParser } from "../src/providers/anthropic/parse-stream.js";
import type { AnthropicStreamEventWire } from "../src/providers/anthropic/wire-types.js";
import { createChunkParser } from "../src/providers/google/create-chunk-parser.js";
import type { GenerateContentResponseWire } from "../src/providers/google/wire-types.js";
import { createChatStreamParser } from "../src/providers/openai-compatible/parse-stream.js";
import type { ChatCompletionChunkWire } from "../src/providers/openai-compatible/wire-types.js";
import { createResponsesStreamParser } from "../src/providers/openai-responses/parse-stream.js";
import type { ResponsesStreamEventWire } from "../src/providers/openai-responses/wire-types.js";
import { foldStreamParts } from "../src/providers/shared/fold-stream-parts.js";
import { readSseEventBatches } from "../src/providers/shared/sse-reader.js";
import { createTestRequest } from "./helpers/adapter-inputs.js";

/**
 * Deltas of the smaller run; the larger one has twice as many. Enough that the text of N deltas
 * (PIECE is 4 characters, a two-byte string: 8 bytes a delta) is already past V8's large-object
 * size (256 KB): a large object costs about a millisecond however small (fresh pages, zeroed as a
 * whole huge page where transparent huge pages are on), so sizes on either side of it made linear
 * code look superlinear.
 */
const N = 40_000;
/**
 * What 2N deltas may cost, as a multiple of what N cost. Not 2: twice the work costs a little more
 * than twice on a real machine (growing arrays are copied, what is kept outgrows a cache), up to
 * ~2.7× measured for linear code; re-reading the text so far costs 4× and more (33–50× for the
 * Messages encoder this test was written against).
 */
const MAX_RATIO = 3;
/** A ratio this high is the code's doing, not the machine's: no more rounds. */
const CLEARLY_SUPERLINEAR = 4;
const PIECE = 'ab"é';
/** PIECE as JSON string content (a custom call's argument pieces). */
const ESCAPED_PIECE = JSON.stringify(PIECE).slice(1, -1);

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

/** A measurement shorter than this is mostly noise: cheap runs are repeated to reach it. */
const MIN_MEASURED_MS = 20;

/** CPU milliseconds of `repeats` runs of `run(count)`. */
async function costOf(run: (count: number) => unknown, count: number, repeats: number): Promise<number> {
  const started = cpuMs();
  for (let repeat = 0; repeat < repeats; repeat++) await run(count);
  return cpuMs() - started;
}

/** Asserts that `run(2N)` costs at most MAX_RATIO times `run(N)`. */
async function assertLinear(run: (count: number) => unknown): Promise<void> {
  // Code that has never run is slower at first.
  await run(2_000);
  await run(2_000);
  let once = Number.POSITIVE_INFINITY;
  for (let calibration = 0; calibration < 3; calibration++) once = Math.min(once, await costOf(run, N, 1));
  const repeats = Math.max(1, Math.ceil(MIN_MEASURED_MS / Math.max(0.1, once)));
  const ratios: string[] = [];
  // The cheapest measurement of each size so far, over every round.
  let single = Number.POSITIVE_INFINITY;
  let double = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    for (let repetition = 0; repetition < 3; repetition++) {
      single = Math.min(single, await costOf(run, N, repeats));
      double = Math.min(double, await costOf(run, 2 * N, repeats));
    }
    const ratio = double / single;
    if (ratio <= MAX_RATIO) return;
    ratios.push(`${double.toFixed(1)} / ${single.toFixed(1)} ms = ${ratio.toFixed(2)}`);
    // One round can be a pause of the machine; two clearly superlinear rounds are the code.
    if (ratio > CLEARLY_SUPERLINEAR && round >= 1) break;
  }
  assert.fail(`${2 * N} deltas cost more than ${MAX_RATIO}× ${N} deltas: ${ratios.join("; ")}`);
}

const CONTEXT: EncodeContext = { requestId: "scaling", model: "test/model", createdAt: 1_700_000_000 };
const SETTLEMENT: Settlement = { usage: createEmptyUsage(), costMicroUsd: 0, finishReason: "stop" };

const ENCODERS: Record<string, () => StreamEncoder> = {
  "chat completions": () => createChatStreamEncoder(CONTEXT),
  responses: () => createResponsesStreamEncoder(CONTEXT),
  "responses (item seal)": () =>
    createResponsesStreamEncoder(CONTEXT, createItemSeal(deriveItemSealKey("scaling-secret"))),
  messages: () => createMessagesStreamEncoder(CONTEXT),
};

/** The parts of one answer shape with `count` deltas, built outside the measured work. */
const SHAPES: Record<string, (count: number) => CanonicalStreamPart[]> = {
  text: (count) => [
    { type: "text-start", id: "t" },
    ...repeat<CanonicalStreamPart>(count, { type: "text-delta", id: "t", delta: PIECE }),
    { type: "text-end", id: "t" },
    { type: "finish", reason: "stop" },
  ],
  reasoning: (count) => [
    { type: "reasoning-start", id: "r" },
    ...repeat<CanonicalStreamPart>(count, { type: "reasoning-delta", id: "r", delta: PIECE }),
    { type: "reasoning-end", id: "r" },
    { type: "finish", reason: "stop" },
  ],
  "tool arguments": (count) => [
    { type: "tool-input-start", id: "c", index: 0, name: "write_file" },
    ...repeat<CanonicalStreamPart>(count, { type: "tool-input-delta", id: "c", delta: PIECE }),
    { type: "tool-input-end", id: "c" },
    { type: "tool-call", id: "c", index: 0, name: "write_file", arguments: PIECE.repeat(count) },
    { type: "finish", reason: "tool-calls" },
  ],
  // A Responses route's custom call: JSON pieces of `{"input": <text>}` (the Responses encoder
  // decodes them back into text, delta by delta).
  "custom tool input": (count) => [
    { type: "tool-input-start", id: "c", index: 0, name: "apply_patch", custom: true },
    { type: "tool-input-delta", id: "c", delta: '{"input":"' },
    ...repeat<CanonicalStreamPart>(count, { type: "tool-input-delta", id: "c", delta: ESCAPED_PIECE }),
    { type: "tool-input-delta", id: "c", delta: '"}' },
    { type: "tool-input-end", id: "c" },
    {
      type: "tool-call",
      id: "c",
      index: 0,
      name: "apply_patch",
      arguments: `{"input":"${ESCAPED_PIECE.repeat(count)}"}`,
      custom: true,
    },
    { type: "finish", reason: "tool-calls" },
  ],
  // Text that arrives while a reasoning block is still open waits behind it (it cannot go out yet).
  "text waiting behind reasoning": (count) => [
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-delta", id: "r", delta: "Thinking." },
    { type: "text-start", id: "t" },
    ...repeat<CanonicalStreamPart>(count, { type: "text-delta", id: "t", delta: PIECE }),
    { type: "reasoning-end", id: "r" },
    { type: "text-end", id: "t" },
    { type: "finish", reason: "stop" },
  ],
};

for (const [format, createEncoder] of Object.entries(ENCODERS)) {
  for (const [shape, build] of Object.entries(SHAPES)) {
    test(`${format} stream encoder, ${shape}: linear in the deltas`, async () => {
      const inputs = new Map([2_000, N, 2 * N].map((count) => [count, build(count)]));
      await assertLinear((count) => {
        const encoder = createEncoder();
        let bytes = 0;
        for (const part of inputs.get(count)!) bytes += encoder.push(part).length;
        return bytes + encoder.finish(SETTLEMENT).length;
      });
    });
  }
}

test("the fold of parts into a non-streamed answer: linear in the deltas", async () => {
  const inputs = new Map(
    [2_000, N, 2 * N].map((count) => [count, [...SHAPES.reasoning(count), ...SHAPES.text(count)]]),
  );
  await assertLinear((count) => foldStreamParts(inputs.get(count)!).content.length);
});

test("the server-tool loop, an answer and a caller's tool call held for the round's end: linear in the deltas", async () => {
  const session: ServerToolSession = {
    definitions: [],
    toolNamed: (name) => (name === "web_search" ? "web_search" : undefined),
    maxCallCostMicroUsd: () => 0,
    maxResultTokens: () => 0,
    readInput: () => ({}),
    execute: () => Promise.reject(new Error("not called")),
  };
  const inputs = new Map(
    [2_000, N, 2 * N].map((count) => [count, [...SHAPES.text(count), ...SHAPES["tool arguments"](count)]]),
  );
  await assertLinear(async (count) => {
    const loop = new ToolLoop(session, createTestRequest(), {
      maxRounds: 3,
      requestId: "scaling",
      maxNativeCallsPerRound: 3,
    });
    let shown = 0;
    for (const part of inputs.get(count)!) shown += loop.transform(part).length;
    const steps = loop.finishRound(async () => true, new AbortController().signal);
    for (let step = await steps.next(); !step.done; step = await steps.next()) shown += 1;
    return shown;
  });
});

test("the delivered-output estimate: linear in the deltas", async () => {
  await assertLinear((count) => {
    const output = new DeliveredOutput(1_000_000);
    for (let index = 0; index < count; index++) output.append(PIECE);
    // (The estimate itself, made once, is bounded work: metering/estimate-usage.ts.)
    return output.produced;
  });
});

test("the SSE reader: linear in the events", async () => {
  const bodies = new Map(
    [2_000, N, 2 * N].map((count) => {
      const text = `data: {"delta":${JSON.stringify(PIECE)}}\n\n`.repeat(count);
      const bytes = Buffer.from(text);
      // Network-sized chunks, cut anywhere (inside events and characters too).
      const chunks: Buffer[] = [];
      for (let offset = 0; offset < bytes.length; offset += 16_381)
        chunks.push(bytes.subarray(offset, offset + 16_381));
      return [count, chunks];
    }),
  );
  await assertLinear(async (count) => {
    let events = 0;
    for await (const batch of readSseEventBatches(Readable.from(bodies.get(count)!))) events += batch.length;
    return events;
  });
});

/** Upstream wire events of each provider kind for each shape; each parser is fed them one by one. */
const PARSERS: Record<
  string,
  Record<string, { events: (count: number) => unknown[]; feed: () => (event: unknown) => unknown }>
> = {
  "chat completions": {
    text: {
      events: (count) => repeat(count, chatChunk({ content: PIECE })),
      feed: chatParser,
    },
    reasoning: {
      events: (count) => repeat(count, chatChunk({ reasoning_content: PIECE })),
      feed: chatParser,
    },
    "tool arguments": {
      events: (count) => [
        chatChunk({
          tool_calls: [
            { index: 0, id: "call_1", type: "function", function: { name: "write_file", arguments: "" } },
          ],
        }),
        ...repeat(count, chatChunk({ tool_calls: [{ index: 0, function: { arguments: PIECE } }] })),
        chatChunk({}, "tool_calls"),
      ],
      feed: chatParser,
    },
  },
  responses: {
    text: {
      events: (count) => [
        { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1" } },
        ...repeat(count, {
          type: "response.output_text.delta",
          output_index: 0,
          content_index: 0,
          delta: PIECE,
        }),
        {
          type: "response.output_item.done",
          output_index: 0,
          item: {
            type: "message",
            id: "msg_1",
            content: [{ type: "output_text", text: PIECE.repeat(count) }],
          },
        },
      ],
      feed: responsesParser,
    },
    reasoning: {
      events: (count) => [
        { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1" } },
        ...repeat(count, {
          type: "response.reasoning_summary_text.delta",
          output_index: 0,
          summary_index: 0,
          delta: PIECE,
        }),
        {
          type: "response.output_item.done",
          output_index: 0,
          item: {
            type: "reasoning",
            id: "rs_1",
            summary: [{ type: "summary_text", text: PIECE.repeat(count) }],
          },
        },
      ],
      feed: responsesParser,
    },
    "tool arguments": {
      events: (count) => [
        {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "write_file" },
        },
        ...repeat(count, {
          type: "response.function_call_arguments.delta",
          output_index: 0,
          delta: PIECE,
        }),
        {
          type: "response.output_item.done",
          output_index: 0,
          item: {
            type: "function_call",
            id: "fc_1",
            call_id: "call_1",
            name: "write_file",
            arguments: PIECE.repeat(count),
          },
        },
      ],
      feed: responsesParser,
    },
    "custom tool input": {
      events: (count) => [
        {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "custom_tool_call", id: "ctc_1", call_id: "call_1", name: "apply_patch", input: "" },
        },
        ...repeat(count, { type: "response.custom_tool_call_input.delta", output_index: 0, delta: PIECE }),
        {
          type: "response.output_item.done",
          output_index: 0,
          item: {
            type: "custom_tool_call",
            id: "ctc_1",
            call_id: "call_1",
            name: "apply_patch",
            input: PIECE.repeat(count),
          },
        },
      ],
      feed: responsesParser,
    },
    // An item completed out of order: the later one's parts are held until the earlier one is done.
    "text held behind an earlier item": {
      events: (count) => [
        { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1" } },
        { type: "response.output_item.added", output_index: 1, item: { type: "message", id: "msg_1" } },
        ...repeat(count, {
          type: "response.output_text.delta",
          output_index: 1,
          content_index: 0,
          delta: PIECE,
        }),
        {
          type: "response.output_item.done",
          output_index: 0,
          item: { type: "reasoning", id: "rs_1", summary: [] },
        },
      ],
      feed: responsesParser,
    },
  },
  anthropic: {
    text: {
      events: (count) =>
        anthropicBlock({ type: "text", text: "" }, count, { type: "text_delta", text: PIECE }),
      feed: anthropicParser,
    },
    reasoning: {
      events: (count) =>
        anthropicBlock({ type: "thinking", thinking: "", signature: "" }, count, {
          type: "thinking_delta",
          thinking: PIECE,
        }),
      feed: anthropicParser,
    },
    "tool arguments": {
      events: (count) =>
        anthropicBlock({ type: "tool_use", id: "toolu_1", name: "write_file", input: {} }, count, {
          type: "input_json_delta",
          partial_json: PIECE,
        }),
      feed: anthropicParser,
    },
  },
  gemini: {
    text: {
      events: (count) => repeat(count, geminiChunk({ text: PIECE })),
      feed: geminiParser,
    },
    reasoning: {
      events: (count) => repeat(count, geminiChunk({ text: PIECE, thought: true })),
      feed: geminiParser,
    },
  },
};

for (const [kind, shapes] of Object.entries(PARSERS)) {
  for (const [shape, { events, feed }] of Object.entries(shapes)) {
    test(`${kind} stream parser, ${shape}: linear in the deltas`, async () => {
      const inputs = new Map([2_000, N, 2 * N].map((count) => [count, events(count)]));
      await assertLinear((count) => {
        const accept = feed();
        let parts = 0;
        for (const event of inputs.get(count)!) parts += (accept(event) as unknown[]).length;
        return parts;
      });
    });
  }
}

function chatChunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
): ChatCompletionChunkWire {
  return {
    id: "chatcmpl-1",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  } as ChatCompletionChunkWire;
}

function chatParser(): (event: unknown) => unknown {
  const parser = createChatStreamParser();
  return (event) => parser.acceptChunk(event as ChatCompletionChunkWire);
}

function responsesParser(): (event: unknown) => unknown {
  const parser = createResponsesStreamParser({ upstreamModel: "gpt-test" });
  return (event) => parser.acceptEvent(event as ResponsesStreamEventWire);
}

function anthropicBlock(
  start: Record<string, unknown>,
  count: number,
  delta: Record<string, unknown>,
): unknown[] {
  return [
    { type: "message_start", message: { id: "msg_1", model: "claude-test", usage: { input_tokens: 10 } } },
    { type: "content_block_start", index: 0, content_block: start },
    ...repeat(count, { type: "content_block_delta", index: 0, delta }),
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: count } },
    { type: "message_stop" },
  ];
}

function anthropicParser(): (event: unknown) => unknown {
  const parser = createAnthropicStreamParser({ upstreamModel: "claude-test" });
  return (event) => parser.acceptEvent(event as AnthropicStreamEventWire);
}

function geminiChunk(part: Record<string, unknown>): GenerateContentResponseWire {
  return {
    candidates: [{ content: { role: "model", parts: [part] }, index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 },
  } as GenerateContentResponseWire;
}

function geminiParser(): (event: unknown) => unknown {
  // With a native tool the parser keeps the answer's text, for the citations of its grounding.
  const parser = createChunkParser({ upstreamModel: "gemini-test", nativeTools: new Set(["web_search"]) });
  return (event) => parser.acceptChunk(event as GenerateContentResponseWire);
}

/**
 * `count` times the same item: parsers and encoders only read their input, and one shared object
 * keeps the input's own memory small next to what the code under test keeps.
 */
function repeat<T>(count: number, item: T): T[] {
  return new Array<T>(count).fill(item);
}
