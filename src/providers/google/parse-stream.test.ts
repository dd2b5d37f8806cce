import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { foldStreamParts } from "../shared/fold-stream-parts.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { parseGenerateContentResponse } from "./parse-response.js";
import { parseGenerateContentStream } from "./parse-stream.js";

const MODEL = "gemini-3-pro-preview";

function chunk(parts: unknown[], extra: Record<string, unknown> = {}) {
  return {
    candidates: [{ content: { parts, role: "model" }, index: 0, ...extra }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 },
    modelVersion: MODEL,
    responseId: "resp-1",
  };
}

async function* toEvents(items: unknown[]): AsyncGenerator<SseEvent> {
  for (const item of items) yield { data: typeof item === "string" ? item : JSON.stringify(item) };
}

async function parse(items: unknown[]): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of parseGenerateContentStream(toEvents(items), { upstreamModel: MODEL }))
    parts.push(part);
  return parts;
}

function withoutIds(parts: CanonicalStreamPart[]): unknown[] {
  return parts.map((part) =>
    "id" in part && part.id.startsWith("call_") ? { ...part, id: "<call>" } : part,
  );
}

test("text stream: metadata first, one text block, usage then finish", async () => {
  const parts = await parse([
    chunk([{ text: "The" }]),
    chunk([{ text: " capital" }]),
    chunk([{ text: " is Paris." }], { finishReason: "STOP" }),
  ]);
  const usage = {
    inputTokens: 9,
    outputTokens: 5,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
  assert.deepEqual(parts, [
    { type: "response-metadata", upstreamId: "resp-1", upstreamModel: MODEL },
    // The count known at the first content (every chunk of this fake carries the same one).
    { type: "usage", usage },
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "The" },
    { type: "text-delta", id: "text-0", delta: " capital" },
    { type: "text-delta", id: "text-0", delta: " is Paris." },
    { type: "text-end", id: "text-0" },
    { type: "usage", usage },
    { type: "finish", reason: "stop", rawReason: "STOP" },
  ]);
});

test("thoughts then text: blocks never overlap; a signature on an answer chunk follows the one text", async () => {
  const parts = await parse([
    chunk([{ text: "**Plan**\n", thought: true }]),
    chunk([{ text: "Step two.", thought: true }]),
    chunk([{ text: "Cross at", thoughtSignature: "sig-2.5" }]),
    chunk([{ text: " the light." }], { finishReason: "STOP" }),
  ]);
  assert.deepEqual(
    parts.filter((part) => part.type !== "usage"),
    [
      { type: "response-metadata", upstreamId: "resp-1", upstreamModel: MODEL },
      { type: "reasoning-start", id: "reasoning-0" },
      { type: "reasoning-delta", id: "reasoning-0", delta: "**Plan**\n" },
      { type: "reasoning-delta", id: "reasoning-0", delta: "Step two." },
      { type: "reasoning-end", id: "reasoning-0" },
      { type: "text-start", id: "text-1" },
      { type: "text-delta", id: "text-1", delta: "Cross at" },
      { type: "text-delta", id: "text-1", delta: " the light." },
      { type: "text-end", id: "text-1" },
      { type: "reasoning-start", id: "reasoning-2" },
      {
        type: "reasoning-end",
        id: "reasoning-2",
        providerState: { providerKind: "google", upstreamModel: MODEL, signature: "sig-2.5" },
      },
      { type: "finish", reason: "stop", rawReason: "STOP" },
    ],
  );
});

test("a signature on a middle text chunk does not split the text; stream and body fold alike", async () => {
  const streamed = await parse([
    chunk([{ text: "Hello from the bar mock" }]),
    chunk([{ text: ".", thoughtSignature: "sig-dot" }]),
    chunk([{ text: " Bye." }], { finishReason: "STOP" }),
  ]);
  const body = parseGenerateContentResponse(
    {
      candidates: [
        {
          content: {
            role: "model",
            parts: [{ text: "Hello from the bar mock. Bye.", thoughtSignature: "sig-dot" }],
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
    },
    { upstreamModel: MODEL },
  );
  const expected = [
    { type: "text", text: "Hello from the bar mock. Bye." },
    {
      type: "reasoning",
      text: "",
      providerState: { providerKind: "google", upstreamModel: MODEL, signature: "sig-dot" },
    },
  ];
  assert.deepEqual(foldStreamParts(streamed).content, expected);
  assert.deepEqual(body.content, expected);
});

test("Gemini 3 trailing empty text part with a signature: no empty text delta, a signed empty reasoning block", async () => {
  const parts = await parse([
    chunk([{ text: "3 r's." }]),
    chunk([{ text: "", thoughtSignature: "sig-end" }], { finishReason: "STOP" }),
  ]);
  assert.deepEqual(
    parts.map((part) => part.type),
    [
      "response-metadata",
      "usage",
      "text-start",
      "text-delta",
      "text-end",
      "reasoning-start",
      "reasoning-end",
      "usage",
      "finish",
    ],
  );
  assert.ok(!parts.some((part) => part.type === "text-delta" && part.delta === ""));
  const end = parts.find((part) => part.type === "reasoning-end");
  assert.equal(end?.type === "reasoning-end" ? end.providerState?.signature : undefined, "sig-end");
});

test("a signature on a thought part closes that reasoning block", async () => {
  const parts = await parse([
    chunk([{ text: "thinking", thought: true, thoughtSignature: "sig-t" }]),
    chunk([{ text: "more thinking", thought: true }]),
    chunk([{ text: "answer" }], { finishReason: "STOP" }),
  ]);
  const reasoningEnds = parts.filter((part) => part.type === "reasoning-end");
  assert.equal(reasoningEnds.length, 2);
  assert.equal(
    reasoningEnds[0]?.type === "reasoning-end" ? reasoningEnds[0].providerState?.signature : "",
    "sig-t",
  );
  assert.equal(reasoningEnds[1]?.type === "reasoning-end" ? reasoningEnds[1].providerState : "x", undefined);
});

test("a function call arrives whole: start, one delta, end, call; STOP becomes tool-calls", async () => {
  const parts = await parse([
    chunk([{ text: "Checking." }]),
    chunk([
      { functionCall: { name: "weather", args: { location: "San Francisco" } }, thoughtSignature: "sig-fc" },
    ]),
    chunk([{ text: "" }], { finishReason: "STOP" }),
  ]);
  assert.deepEqual(withoutIds(parts.filter((part) => part.type !== "usage")), [
    { type: "response-metadata", upstreamId: "resp-1", upstreamModel: MODEL },
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Checking." },
    { type: "text-end", id: "text-0" },
    { type: "tool-input-start", id: "<call>", index: 0, name: "weather" },
    { type: "tool-input-delta", id: "<call>", delta: '{"location":"San Francisco"}' },
    { type: "tool-input-end", id: "<call>" },
    {
      type: "tool-call",
      id: "<call>",
      index: 0,
      name: "weather",
      arguments: '{"location":"San Francisco"}',
      providerState: { providerKind: "google", upstreamModel: MODEL, signature: "sig-fc" },
    },
    { type: "finish", reason: "tool-calls", rawReason: "STOP" },
  ]);
  const call = parts.find((part) => part.type === "tool-call");
  assert.match(call?.type === "tool-call" ? call.id : "", /^call_[A-Za-z0-9]{24}$/);
});

test("A7: three calls to one tool in three chunks are three distinct calls 0, 1, 2", async () => {
  const call = (path: string) => ({ functionCall: { name: "read_file", args: { path } } });
  const parts = await parse([
    chunk([call("a")]),
    chunk([call("b")]),
    chunk([call("c")], { finishReason: "STOP" }),
  ]);
  const calls = parts.flatMap((part) => (part.type === "tool-call" ? [part] : []));
  assert.deepEqual(
    calls.map((item) => [item.index, item.name, item.arguments]),
    [
      [0, "read_file", '{"path":"a"}'],
      [1, "read_file", '{"path":"b"}'],
      [2, "read_file", '{"path":"c"}'],
    ],
  );
  assert.equal(new Set(calls.map((item) => item.id)).size, 3);
});

test("a function call without args gets {}", async () => {
  const parts = await parse([chunk([{ functionCall: { name: "now" } }], { finishReason: "STOP" })]);
  const call = parts.find((part) => part.type === "tool-call");
  assert.equal(call?.type === "tool-call" ? call.arguments : "", "{}");
});

test("usage is cumulative: the last chunk's counters win", async () => {
  const parts = await parse([
    { ...chunk([{ text: "a" }]), usageMetadata: { promptTokenCount: 15, totalTokenCount: 15 } },
    {
      ...chunk([{ text: "b" }], { finishReason: "STOP" }),
      usageMetadata: {
        promptTokenCount: 13,
        candidatesTokenCount: 8,
        thoughtsTokenCount: 4,
        totalTokenCount: 25,
      },
    },
  ]);
  const usage = parts.findLast((part) => part.type === "usage");
  assert.deepEqual(
    usage?.type === "usage"
      ? [usage.usage.inputTokens, usage.usage.outputTokens, usage.usage.reasoningTokens]
      : [],
    [13, 12, 4],
  );
});

test("finish reasons: MAX_TOKENS, SAFETY without parts, MALFORMED_FUNCTION_CALL", async () => {
  const finishOf = async (items: unknown[]) => (await parse(items)).at(-1);
  assert.deepEqual(
    await finishOf([chunk([{ text: "The capital of France is" }], { finishReason: "MAX_TOKENS" })]),
    {
      type: "finish",
      reason: "length",
      rawReason: "MAX_TOKENS",
    },
  );
  const safety = await parse([
    {
      candidates: [{ content: {}, finishReason: "SAFETY", index: 0 }],
      usageMetadata: { promptTokenCount: 14, totalTokenCount: 14 },
    },
  ]);
  assert.deepEqual(
    safety.map((part) => part.type),
    ["response-metadata", "usage", "finish"],
  );
  assert.deepEqual(safety.at(-1), { type: "finish", reason: "content-filter", rawReason: "SAFETY" });
  assert.deepEqual(
    await finishOf([
      chunk([], {
        finishReason: "MALFORMED_FUNCTION_CALL",
        finishMessage: "Malformed function call: print(",
      }),
    ]),
    {
      type: "finish",
      reason: "other",
      rawReason: "MALFORMED_FUNCTION_CALL",
    },
  );
});

test("a blocked prompt (no candidates, promptFeedback.blockReason) is content_filter", async () => {
  await assert.rejects(
    parse([
      {
        promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
        usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
      },
    ]),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === "content_filter" &&
      /PROHIBITED_CONTENT/.test(error.message),
  );
});

test("a stream that ends without finishReason fails", async () => {
  await assert.rejects(parse([chunk([{ text: "Hi" }])]), {
    code: "provider_unavailable",
    message: "upstream stream ended early",
  });
  await assert.rejects(parse([]), { code: "provider_unavailable" });
});

test("an error frame is classified; a malformed frame is provider_unavailable", async () => {
  await assert.rejects(
    parse([
      chunk([{ text: "Hi" }]),
      { error: { code: 503, message: "The service is currently unavailable.", status: "UNAVAILABLE" } },
    ]),
    { code: "provider_unavailable", upstreamStatus: 503 },
  );
  await assert.rejects(
    parse([{ error: { code: 429, message: "Resource exhausted", status: "RESOURCE_EXHAUSTED" } }]),
    { code: "provider_rate_limit" },
  );
  await assert.rejects(parse(["{not json"]), { code: "provider_unavailable", message: /malformed/ });
});

test("Vertex partial function-call arguments are refused rather than guessed", async () => {
  await assert.rejects(parse([chunk([{ functionCall: { name: "getWeather", willContinue: true } }])]), {
    code: "provider_unavailable",
    message: /partial function-call arguments/,
  });
});

test("parts the canonical model has no place for are skipped; other candidates are ignored", async () => {
  const parts = await parse([
    {
      candidates: [
        { content: { parts: [{ text: "second" }] }, index: 1 },
        {
          content: {
            parts: [
              { executableCode: { code: "print(1)" } },
              { inlineData: { mimeType: "image/png", data: "x" } },
              { text: "first" },
            ],
          },
          index: 0,
          finishReason: "STOP",
        },
      ],
    },
  ]);
  const text = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("");
  assert.equal(text, "first");
});
