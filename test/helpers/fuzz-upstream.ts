/**
 * fast-check arbitraries for what an upstream provider sends back, per provider kind: valid event
 * streams and JSON bodies built with the fake upstreams' builders, then broken at the frame level
 * (a field mutated, frames dropped, repeated, swapped, cut short; garbage, invalid JSON and huge
 * frames inserted) and at the byte level (cut anywhere, line ends changed, split into chunks at
 * arbitrary points, multi-byte UTF-8 characters included, the connection reset at the end).
 * Also the checks every parsed stream must pass: the canonical part lifecycles.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { CanonicalStreamPart, CanonicalUsage } from "../../src/canonical/index.js";
import {
  buildMessage,
  buildUsage,
  messageDeltaEvent,
  messageStartEvent,
  messageStopEvent,
  redactedThinkingBlockEvents,
  textBlockEvents,
  thinkingBlockEvents,
  toolUseBlockEvents,
} from "./fake-anthropic-upstream.js";
import { buildGeminiChunk } from "./fake-google-upstream.js";
import {
  buildResponse,
  buildResponseEvents,
  type ResponseItemSpec,
} from "./fake-openai-responses-upstream.js";
import { buildChatCompletion, buildChunk, buildUsageChunk } from "./fake-openai-upstream.js";
import { applyMutation, mutationsOf, oddValues, serialise } from "./fuzz-bodies.js";

/** One SSE frame before serialisation: `event:` name and `data:` payload (an object, or raw text). */
export interface Frame {
  event?: string;
  data: unknown;
}

export type UpstreamKind = "openai-chat" | "openai-responses" | "anthropic" | "google";

/** Text pieces with multi-byte characters, so byte splits land inside them. */
const pieces = fc.array(
  fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom("é", "日本語", "😀👍🏽", "\u0000", "\ud800", "a\nb", "data: x", "\r\n\r\n", '"}'),
  ),
  { maxLength: 4 },
);

const argumentFragments = fc
  .constantFrom(['{"city":', '"Paris"}'], [""], ['{"a":1}'], ["{", "not json"], ["[1,2]"])
  .map((fragments) => [...fragments]);

function chatFrames(): fc.Arbitrary<Frame[]> {
  return fc
    .record({
      reasoning: pieces,
      text: pieces,
      calls: fc.array(argumentFragments, { maxLength: 2 }),
      finish: fc.constantFrom("stop", "length", "tool_calls", "content_filter", "weird"),
      usage: fc.boolean(),
    })
    .map(({ reasoning, text, calls, finish, usage }) => {
      const chunks = [
        buildChunk({ role: "assistant", content: "" }),
        ...reasoning.map((piece) => buildChunk({ reasoning_content: piece })),
        ...text.map((piece) => buildChunk({ content: piece })),
        ...calls.flatMap((fragments, index) => [
          buildChunk({
            tool_calls: [
              { index, id: `call_${index}`, type: "function", function: { name: "f", arguments: "" } },
            ],
          }),
          ...fragments.map((fragment) =>
            buildChunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
          ),
        ]),
        buildChunk({}, { finishReason: finish }),
        ...(usage ? [buildUsageChunk()] : []),
      ];
      return [...chunks.map((data) => ({ data })), { data: "[DONE]" }];
    });
}

function anthropicFrames(): fc.Arbitrary<Frame[]> {
  const block = fc.oneof(
    pieces.map((text) => ({ kind: "text" as const, text })),
    pieces.map((text) => ({ kind: "thinking" as const, text })),
    fc.constant({ kind: "redacted" as const, text: [] as string[] }),
    argumentFragments.map((text) => ({ kind: "tool" as const, text })),
  );
  return fc
    .record({
      blocks: fc.array(block, { maxLength: 3 }),
      stop: fc.constantFrom("end_turn", "tool_use", "max_tokens"),
    })
    .map(({ blocks, stop }) => {
      const events = [
        messageStartEvent(),
        ...blocks.flatMap((item, index) => {
          if (item.kind === "text") return textBlockEvents(index, item.text);
          if (item.kind === "thinking") return thinkingBlockEvents(index, item.text, "sig");
          if (item.kind === "redacted") return redactedThinkingBlockEvents(index, "opaque");
          return toolUseBlockEvents(index, { id: `toolu_${index}`, name: "f", fragments: item.text });
        }),
        { type: "ping" },
        messageDeltaEvent({ stopReason: stop }),
        messageStopEvent(),
      ];
      return events.map((data) => ({ event: String(data.type), data }));
    });
}

function responseItems(): fc.Arbitrary<ResponseItemSpec[]> {
  const item: fc.Arbitrary<ResponseItemSpec> = fc.oneof(
    pieces.map((text) => ({ type: "message" as const, text })),
    argumentFragments.map((fragments) => ({
      type: "function_call" as const,
      name: "f",
      arguments: fragments,
    })),
    fc.array(pieces, { maxLength: 2 }).map((summary) => ({
      type: "reasoning" as const,
      summary,
      encryptedContent: "enc",
    })),
  );
  return fc.array(item, { maxLength: 3 });
}

function responsesFrames(): fc.Arbitrary<Frame[]> {
  return fc.record({ items: responseItems(), incomplete: fc.boolean() }).map(({ items, incomplete }) =>
    buildResponseEvents({ items, ...(incomplete ? { status: "incomplete" as const } : {}) }).map((data) => ({
      event: data.type,
      data,
    })),
  );
}

const geminiPart = fc.oneof(
  fc.string({ maxLength: 12 }).map((text) => ({ text })),
  pieces.map((text) => ({ text: text.join("") })),
  fc.constant({ text: "thinking…", thought: true, thoughtSignature: "c2ln" }),
  fc.constant({ text: "", thoughtSignature: "c2ln" }),
  fc.constant({ functionCall: { name: "f", args: { city: "Paris" } }, thoughtSignature: "c2ln" }),
);

function googleFrames(): fc.Arbitrary<Frame[]> {
  return fc
    .record({
      chunks: fc.array(fc.array(geminiPart, { maxLength: 2 }), { minLength: 1, maxLength: 4 }),
      finish: fc.constantFrom("STOP", "MAX_TOKENS", "SAFETY", "OTHER"),
    })
    .map(({ chunks, finish }) =>
      chunks.map((parts, index) => ({
        data: buildGeminiChunk(parts, index === chunks.length - 1 ? { finishReason: finish } : {}),
      })),
    );
}

export const VALID_FRAMES: Record<UpstreamKind, () => fc.Arbitrary<Frame[]>> = {
  "openai-chat": chatFrames,
  "openai-responses": responsesFrames,
  anthropic: anthropicFrames,
  google: googleFrames,
};

/** Valid non-streamed bodies of each kind. */
export const VALID_BODIES: Record<UpstreamKind, () => fc.Arbitrary<Record<string, unknown>>> = {
  "openai-chat": () =>
    fc
      .record({ text: pieces, calls: fc.array(argumentFragments, { maxLength: 2 }), reasoning: fc.boolean() })
      .map(({ text, calls, reasoning }) =>
        buildChatCompletion({
          content: text.join(""),
          ...(reasoning ? { reasoningContent: "hmm" } : {}),
          toolCalls: calls.map((fragments, index) => ({
            id: `call_${index}`,
            name: "f",
            arguments: fragments.join(""),
          })),
        }),
      ),
  "openai-responses": () => responseItems().map((items) => buildResponse({ items })),
  anthropic: () =>
    fc
      .array(
        fc.oneof(
          pieces.map((text) => ({ type: "text", text: text.join("") })),
          fc.constant({ type: "thinking", thinking: "hmm", signature: "sig" }),
          fc.constant({ type: "redacted_thinking", data: "opaque" }),
          fc.constant({ type: "tool_use", id: "toolu_1", name: "f", input: { city: "Paris" } }),
        ),
        { maxLength: 3 },
      )
      .map((content) => buildMessage({ content, usage: buildUsage() })),
  google: () =>
    fc
      .array(geminiPart, { maxLength: 3 })
      .map((parts) => buildGeminiChunk(parts, { finishReason: "STOP" }) as Record<string, unknown>),
};

type FrameMutation =
  | {
      kind: "mutate";
      at: number;
      mutation: ReturnType<typeof mutationsOf> extends fc.Arbitrary<infer M> ? M : never;
    }
  | { kind: "delete" | "duplicate" | "truncate"; at: number }
  | { kind: "swap"; at: number; with: number }
  | { kind: "insert"; at: number; frame: Frame };

/** Frames no well-behaved upstream sends. */
const oddFrames: fc.Arbitrary<Frame> = fc.oneof(
  fc.string({ maxLength: 60 }).map((data) => ({ data })),
  fc.constantFrom<Frame>(
    { data: "{" },
    { data: "[DONE]" },
    { data: "null" },
    { data: "[]" },
    { data: "12" },
    { data: '"text"' },
    { data: "{}" },
    { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
    { event: "error", data: "not json" },
    { event: "error", data: {} },
    { data: { error: { message: "boom", code: 500 } } },
    { data: { error: "boom" } },
    { data: { error: { status: "constructor", type: "toString", code: "__proto__" } } },
    { data: { type: "response.failed", response: { error: null } } },
    { data: { type: "message_start", message: null } },
    { data: { choices: [null, 1, "x"] } },
    { data: { candidates: [null] } },
  ),
  oddValues.map((data) => ({ data: serialise(data) })),
  // Huge frames: over the reader's event cap in the runs that set a small one.
  fc
    .integer({ min: 70_000, max: 200_000 })
    .map((size) => ({ data: { choices: [{ index: 0, delta: { content: "y".repeat(size) } }] } })),
  fc.integer({ min: 70_000, max: 200_000 }).map((size) => ({ data: "x".repeat(size) })),
);

function frameMutations(length: number): fc.Arbitrary<FrameMutation> {
  const at = fc.nat({ max: Math.max(0, length - 1) });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("insert" as const),
        at: fc.nat({ max: length }),
        frame: oddFrames,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constantFrom("delete" as const, "duplicate" as const, "truncate" as const),
        at,
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("swap" as const), at, with: at }) },
  );
}

function applyFrameMutation(frames: Frame[], mutation: FrameMutation): Frame[] {
  const copy = [...frames];
  switch (mutation.kind) {
    case "mutate":
      if (copy[mutation.at] !== undefined) {
        copy[mutation.at] = {
          ...copy[mutation.at]!,
          data: applyMutation(copy[mutation.at]!.data, mutation.mutation),
        };
      }
      return copy;
    case "delete":
      copy.splice(mutation.at, 1);
      return copy;
    case "duplicate":
      if (copy[mutation.at] !== undefined) copy.splice(mutation.at, 0, copy[mutation.at]!);
      return copy;
    case "truncate":
      return copy.slice(0, mutation.at);
    case "swap": {
      const [a, b] = [copy[mutation.at], copy[mutation.with]];
      if (a !== undefined && b !== undefined) [copy[mutation.at], copy[mutation.with]] = [b, a];
      return copy;
    }
    case "insert":
      copy.splice(mutation.at, 0, mutation.frame);
      return copy;
  }
}

/**
 * Valid frames with faults: fields of up to two frames mutated (against the valid frames), then up
 * to three frame-level changes.
 */
export function brokenFrames(kind: UpstreamKind): fc.Arbitrary<Frame[]> {
  return VALID_FRAMES[kind]().chain((frames) => {
    const fieldMutation = fc
      .nat({ max: frames.length - 1 })
      .chain((at) =>
        typeof frames[at]!.data === "object"
          ? mutationsOf(frames[at]!.data).map((mutation): FrameMutation => ({ kind: "mutate", at, mutation }))
          : fc.constant<FrameMutation>({ kind: "delete", at }),
      );
    return fc
      .tuple(
        fc.array(fieldMutation, { maxLength: 2 }),
        fc
          .array(fc.nat(), { maxLength: 3 })
          .chain((sizes) =>
            fc.tuple(...sizes.map((_, position) => frameMutations(frames.length + position))),
          ),
      )
      .map(([fieldMutations, frameChanges]) =>
        [...fieldMutations, ...frameChanges].reduce(applyFrameMutation, frames),
      );
  });
}

export interface UpstreamBytes {
  chunks: Uint8Array[];
  /** Thrown by the body after the last chunk (a reset connection), if set. */
  failure?: Error;
}

/** The frames as SSE bytes, possibly cut or spliced, split into chunks at arbitrary points. */
export function framesToBytes(frames: Frame[]): fc.Arbitrary<UpstreamBytes> {
  return fc
    .record({
      lineEnd: fc.constantFrom("\n", "\n", "\r\n", "\r"),
      comments: fc.boolean(),
      cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 4 }),
      garbage: fc.option(
        fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.uint8Array({ minLength: 1, maxLength: 8 })),
        {
          freq: 6,
        },
      ),
      splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
      reset: fc
        .boolean()
        .map((reset) =>
          reset ? Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) : undefined,
        ),
    })
    .map(({ lineEnd, comments, cut, garbage, splits, reset }) => {
      const text = frames
        .map((frame) => {
          const data = typeof frame.data === "string" ? frame.data : serialise(frame.data);
          const lines = [
            ...(comments ? [": keep-alive"] : []),
            ...(frame.event === undefined ? [] : [`event: ${frame.event}`]),
            `data: ${data}`,
          ];
          return `${lines.join(lineEnd)}${lineEnd}${lineEnd}`;
        })
        .join("");
      let bytes: Buffer = Buffer.from(text, "utf8");
      if (cut !== null) bytes = bytes.subarray(0, Math.floor(bytes.length * cut));
      if (garbage !== null) {
        const at = Math.floor(bytes.length * garbage[0]);
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(garbage[1]), bytes.subarray(at)]);
      }
      const points = [...new Set(splits.map((point) => Math.floor(bytes.length * point)))].sort(
        (a, b) => a - b,
      );
      const chunks: Uint8Array[] = [];
      let start = 0;
      for (const point of [...points, bytes.length]) {
        if (point > start) chunks.push(bytes.subarray(start, point));
        start = Math.max(start, point);
      }
      return { chunks, ...(reset === undefined ? {} : { failure: reset }) };
    });
}

/** An async body of the chunks, failing at the end when asked to. */
export async function* replayBytes(bytes: UpstreamBytes): AsyncGenerator<Uint8Array> {
  for (const chunk of bytes.chunks) yield chunk;
  if (bytes.failure !== undefined) throw bytes.failure;
}

const USAGE_FIELDS: Array<keyof CanonicalUsage> = [
  "inputTokens",
  "outputTokens",
  "cachedInputTokens",
  "cacheWriteTokens",
  "cacheWrite1hTokens",
  "reasoningTokens",
];

/** Token counts a usage record can hold: non-negative integers within PostgreSQL's INTEGER. */
export function checkUsage(usage: CanonicalUsage, what: string): void {
  for (const field of USAGE_FIELDS) {
    const value = usage[field];
    assert.ok(
      Number.isSafeInteger(value) && value >= 0 && value <= 2_147_483_647,
      `${what}: usage.${field} = ${value}`,
    );
  }
}

/**
 * The canonical lifecycles: every delta and end belongs to an open block of its kind, blocks are
 * closed before `finish`, `finish` comes once and last, strings are strings, usage is countable.
 */
function blockKindOf(type: string): "text" | "reasoning" | "tool" {
  return type.startsWith("text-") ? "text" : type.startsWith("reasoning-") ? "reasoning" : "tool";
}

export function checkPartSequence(parts: CanonicalStreamPart[], what: string): void {
  const open = new Map<string, "text" | "reasoning" | "tool">();
  let finished = false;
  for (const part of parts) {
    const where = `${what}: ${JSON.stringify(part).slice(0, 200)}`;
    assert.ok(!finished, `a part after finish: ${where}`);
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
      case "tool-input-start": {
        assert.ok(!open.has(part.id), `block opened twice: ${where}`);
        open.set(part.id, blockKindOf(part.type));
        break;
      }
      case "text-delta":
      case "reasoning-delta":
      case "tool-input-delta":
        assert.equal(open.get(part.id), blockKindOf(part.type), `delta outside its block: ${where}`);
        assert.equal(typeof part.delta, "string", where);
        break;
      case "text-end":
      case "reasoning-end":
      case "tool-input-end":
        assert.equal(open.get(part.id), blockKindOf(part.type), `end outside its block: ${where}`);
        open.delete(part.id);
        break;
      case "tool-call":
        assert.ok(
          typeof part.name === "string" && typeof part.arguments === "string" && Number.isInteger(part.index),
          where,
        );
        break;
      case "usage":
        checkUsage(part.usage, where);
        break;
      case "finish":
        assert.equal(open.size, 0, `blocks still open at finish: ${[...open.keys()].join(", ")}: ${where}`);
        finished = true;
        break;
      case "response-metadata":
      case "error":
        break;
      default:
        assert.fail(`unknown part: ${where}`);
    }
  }
}
