import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssistantContentPart, CanonicalResult } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { foldStreamParts } from "../shared/fold-stream-parts.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { convertAssistantParts } from "./convert-contents.js";
import { convertJsonBodyToParts, parseGenerateContentResponse } from "./parse-response.js";
import { parseGenerateContentStream } from "./parse-stream.js";

const MODEL = "gemini-3-flash-preview";
const options = { upstreamModel: MODEL };

function response(
  parts: unknown[],
  extra: Record<string, unknown> = {},
  usage: Record<string, unknown> = {},
) {
  return {
    candidates: [{ content: { parts, role: "model" }, finishReason: "STOP", index: 0, ...extra }],
    usageMetadata: {
      promptTokenCount: 83,
      candidatesTokenCount: 30,
      thoughtsTokenCount: 190,
      totalTokenCount: 303,
      ...usage,
    },
    modelVersion: MODEL,
    responseId: "wOd8abGuO5rgz7IP5tLEGA",
  };
}

/** The assistant turn a client would send back: the result's content, in order. */
function replay(result: CanonicalResult): AssistantContentPart[] {
  return result.content.map((item) => ({ ...item }) as AssistantContentPart);
}

test("text, thoughts, ids, usage and finish", () => {
  const result = parseGenerateContentResponse(
    response([{ text: "Let me think.", thought: true }, { text: "Paris." }]),
    options,
  );
  assert.deepEqual(result, {
    upstreamId: "wOd8abGuO5rgz7IP5tLEGA",
    upstreamModel: MODEL,
    content: [
      { type: "reasoning", text: "Let me think." },
      { type: "text", text: "Paris." },
    ],
    finishReason: "stop",
    rawFinishReason: "STOP",
    usage: {
      inputTokens: 83,
      outputTokens: 220,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 190,
    },
  });
  assert.equal(result.usage.inputTokens + result.usage.outputTokens, 303);
});

test("parallel calls to one tool: distinct ids, only the first signed, tool-calls finish", () => {
  const result = parseGenerateContentResponse(
    response(
      [
        { functionCall: { args: {}, name: "generate_topic" }, thoughtSignature: "Es8FCswF+/==" },
        { functionCall: { args: {}, name: "generate_topic" } },
        { functionCall: { args: {}, name: "generate_topic" } },
      ],
      { finishMessage: "Model generated function call(s)." },
    ),
    options,
  );
  assert.equal(result.finishReason, "tool-calls");
  const calls = result.content.flatMap((item) => (item.type === "tool-call" ? [item] : []));
  assert.equal(calls.length, 3);
  assert.equal(new Set(calls.map((call) => call.id)).size, 3);
  assert.deepEqual(calls[0]?.providerState, {
    providerKind: "google",
    upstreamModel: MODEL,
    signature: "Es8FCswF+/==",
  });
  assert.equal(calls[1]?.providerState, undefined);
});

test("MAX_TOKENS with no parts (the whole budget spent thinking) is an empty length result", () => {
  const result = parseGenerateContentResponse(
    {
      candidates: [{ content: { role: "model" }, finishReason: "MAX_TOKENS", index: 0 }],
      usageMetadata: { promptTokenCount: 15, thoughtsTokenCount: 2, totalTokenCount: 17 },
      modelVersion: "gemini-2.5-pro",
    },
    options,
  );
  assert.deepEqual(result.content, []);
  assert.equal(result.finishReason, "length");
  assert.equal(result.usage.outputTokens, 2);
});

test("a blocked prompt throws content_filter; an error body is classified; junk is provider_unavailable", () => {
  assert.throws(
    () =>
      parseGenerateContentResponse({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: {} }, options),
    (error: unknown) => error instanceof GatewayError && error.code === "content_filter",
  );
  assert.throws(
    () =>
      parseGenerateContentResponse(
        { error: { code: 400, message: "Bad thing", status: "INVALID_ARGUMENT" } },
        options,
      ),
    { code: "invalid_request", message: "Bad thing" },
  );
  assert.throws(() => parseGenerateContentResponse("text", options), { code: "provider_unavailable" });
  assert.throws(() => parseGenerateContentResponse([], options), { code: "provider_unavailable" });
});

test("a complete body without finishReason finishes as other", () => {
  const body = response([{ text: "Hi" }]);
  delete (body.candidates[0] as Record<string, unknown>).finishReason;
  const result = parseGenerateContentResponse(body, options);
  assert.equal(result.finishReason, "other");
  assert.equal(result.rawFinishReason, undefined);
});

test("an array of chunks (streamGenerateContent without alt=sse) folds like the stream", () => {
  const parts = convertJsonBodyToParts(
    [
      { candidates: [{ content: { parts: [{ text: "Hel" }] }, index: 0 }] },
      { candidates: [{ content: { parts: [{ text: "lo" }] }, finishReason: "STOP", index: 0 }] },
    ],
    options,
  );
  assert.deepEqual(foldStreamParts(parts).content, [{ type: "text", text: "Hello" }]);
});

// B13 end to end: Gemini parts → canonical (turn 1) → Gemini parts (turn 2), same positions, same
// bytes; a signature on a trailing empty part comes back on the text before it (a third entry: the
// parts sent back when they differ).
const ROUND_TRIPS: Array<[string, Array<Record<string, unknown>>, Array<Record<string, unknown>>?]> = [
  [
    "signed first call of a parallel batch",
    [
      { functionCall: { name: "generate_topic", args: {} }, thoughtSignature: "Es8FCswFAXLI2nx/+abc==" },
      { functionCall: { name: "generate_topic", args: { n: 2 } } },
    ],
  ],
  ["signed text part", [{ text: "This is a great question!", thoughtSignature: "CiIB0e2Kb6Syj1a961Ef" }]],
  [
    "trailing empty signed text",
    [{ text: "There are 3 r's." }, { text: "", thoughtSignature: "EqsFCqgFAb4+9vvt" }],
    [{ text: "There are 3 r's.", thoughtSignature: "EqsFCqgFAb4+9vvt" }],
  ],
  [
    "signature on the last of several text chunks",
    [{ text: "Hello from " }, { text: "the bar mock" }, { text: ".", thoughtSignature: "sig-dot" }],
    [{ text: "Hello from the bar mock.", thoughtSignature: "sig-dot" }],
  ],
  [
    "text, signed call, trailing signature",
    [
      { text: "Checking." },
      { functionCall: { name: "weather", args: { location: "SF" } }, thoughtSignature: "sig-call" },
      { text: "", thoughtSignature: "sig-end" },
    ],
  ],
  [
    "signed thought part",
    [{ text: "**Plan**", thought: true, thoughtSignature: "sig-thought" }, { text: "Done." }],
  ],
];

for (const [name, parts, sentBack = parts] of ROUND_TRIPS) {
  test(`B13 round trip (JSON): ${name}`, () => {
    const result = parseGenerateContentResponse(response(parts), options);
    assert.deepEqual(convertAssistantParts(replay(result), MODEL, "messages[1]"), sentBack);
  });

  test(`B13 round trip (stream, one part per chunk): ${name}`, async () => {
    async function* events(): AsyncGenerator<SseEvent> {
      for (const [index, part] of parts.entries()) {
        const last = index === parts.length - 1;
        yield { data: JSON.stringify(response([part], last ? {} : { finishReason: undefined })) };
      }
    }
    const streamed = [];
    for await (const part of parseGenerateContentStream(events(), options)) streamed.push(part);
    assert.deepEqual(
      convertAssistantParts(replay(foldStreamParts(streamed)), MODEL, "messages[1]"),
      sentBack,
    );
  });
}

test("B14: the same turn replayed to another model drops every signature", () => {
  const turn = ROUND_TRIPS.find(([name]) => name === "text, signed call, trailing signature")!;
  const result = parseGenerateContentResponse(response(turn[1]), options);
  assert.deepEqual(convertAssistantParts(replay(result), "gemini-2.5-flash", "messages[1]"), [
    { text: "Checking." },
    { functionCall: { name: "weather", args: { location: "SF" } } },
  ]);
});

test("candidates and parts of the wrong type are read around, never a TypeError", async () => {
  const body = { candidates: [null, 2, { content: { parts: {} }, finishReason: "STOP", index: 0 }] };
  assert.deepEqual(parseGenerateContentResponse(body, options).content, []);
  for (const parts of [Number.POSITIVE_INFINITY, "text", { text: "x" }]) {
    const chunk = { candidates: [{ content: { parts }, finishReason: "STOP", index: 0 }] };
    const streamed: unknown[] = [];
    async function* events(): AsyncGenerator<SseEvent> {
      yield { data: JSON.stringify(chunk).replace('"parts":null', '"parts":1e400') };
    }
    for await (const part of parseGenerateContentStream(events(), options)) streamed.push(part);
    assert.equal((streamed.at(-1) as { type: string }).type, "finish", JSON.stringify(parts));
  }
});
