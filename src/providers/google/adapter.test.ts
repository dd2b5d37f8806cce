import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  buildGeminiChunk,
  buildGeminiTextChunks,
  buildGenerateContentResponse,
  type FakeGoogleUpstream,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../../../test/helpers/fake-google-upstream.js";
import type { CanonicalRequest, CanonicalStreamPart } from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createGoogleAdapter } from "./adapter.js";

const API_KEY = "AIzaSyFakeKeyForTests0123456789abcdefg";
const MODEL = "gemini-2.5-flash";

let upstream: FakeGoogleUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createGoogleAdapter({ httpClient });

before(async () => {
  upstream = await startFakeGoogleUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

function callFor(
  options: {
    provider?: Partial<ProviderConfig>;
    signal?: AbortSignal;
    request?: Partial<CanonicalRequest>;
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: { kind: "google", baseUrl: upstream.baseUrl, apiKey: API_KEY, ...options.provider },
    signal: options.signal,
  });
  call.upstreamModel = MODEL;
  return call;
}

async function collect(call: UpstreamCall): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(call)) parts.push(part);
  return parts;
}

function textOf(parts: CanonicalStreamPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
}

test("generate: POST :generateContent with the key in x-goog-api-key, never in the URL", async () => {
  upstream.enqueue(fakeGoogleReply.json(buildGenerateContentResponse({ text: "Bonjour" })));
  const before = upstream.requests.length;
  const result = await adapter.generate(callFor());
  const request = upstream.requests[before]!;
  assert.equal(adapter.kind, "google");
  assert.equal(request.method, "POST");
  assert.equal(request.path, `/v1beta/models/${MODEL}:generateContent`);
  assert.equal(request.headers["x-goog-api-key"], API_KEY);
  assert.equal(request.headers.authorization, undefined);
  assert.ok(!request.path.includes(API_KEY) && !request.path.includes("key="));
  assert.equal(request.headers["content-type"], "application/json");
  assert.deepEqual(request.body.contents, [{ role: "user", parts: [{ text: "Hello" }] }]);
  assert.equal(request.body.generationConfig.maxOutputTokens, 1024);
  assert.deepEqual(result.content, [{ type: "text", text: "Bonjour" }]);
  assert.equal(result.finishReason, "stop");
  assert.equal(result.usage.inputTokens + result.usage.outputTokens, 15);
});

test("stream: :streamGenerateContent?alt=sse, CRLF frames, no terminator", async () => {
  upstream.enqueue(fakeGoogleReply.sse(buildGeminiTextChunks(["Hel", "lo ", "wörld"])));
  const before = upstream.requests.length;
  const parts = await collect(callFor());
  const request = upstream.requests[before]!;
  assert.equal(request.path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  assert.equal(request.headers["x-goog-api-key"], API_KEY);
  assert.equal(request.headers.accept, "text/event-stream");
  assert.equal(parts[0]?.type, "response-metadata");
  assert.equal(textOf(parts), "Hello wörld");
  assert.deepEqual(
    parts.slice(-2).map((part) => part.type),
    ["usage", "finish"],
  );
});

test("stream: a recorded-style body split at every few bytes reassembles", async () => {
  const body = buildGeminiTextChunks(["¿Qué ", "tal? ", "Très bien — 👍"])
    .map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`)
    .join("");
  upstream.enqueue(fakeGoogleReply.raw(body, { chunkSize: 7 }));
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "¿Qué tal? Très bien — 👍");
  assert.equal(parts.at(-1)?.type, "finish");
});

test("stream: thoughts then answer, reasoning and usage counted", async () => {
  upstream.enqueue(
    fakeGoogleReply.sse([
      buildGeminiChunk([{ text: "Thinking about it.", thought: true }], {
        usage: { promptTokenCount: 34, thoughtsTokenCount: 68, totalTokenCount: 102 },
      }),
      buildGeminiChunk([{ text: "Look left.", thoughtSignature: "CiIB0e2Kb6Sy" }], {
        usage: {
          promptTokenCount: 34,
          candidatesTokenCount: 3,
          thoughtsTokenCount: 68,
          totalTokenCount: 105,
        },
      }),
      buildGeminiChunk([{ text: " Then right." }], {
        finishReason: "STOP",
        usage: {
          promptTokenCount: 34,
          candidatesTokenCount: 6,
          thoughtsTokenCount: 68,
          totalTokenCount: 108,
        },
      }),
    ]),
  );
  const parts = await collect(callFor({ request: { reasoning: { effort: "low" } } }));
  const reasoning = parts.flatMap((part) => (part.type === "reasoning-delta" ? [part.delta] : [])).join("");
  assert.equal(reasoning, "Thinking about it.");
  assert.equal(textOf(parts), "Look left. Then right.");
  const usage = parts.findLast((part) => part.type === "usage");
  assert.deepEqual(
    usage?.type === "usage" ? [usage.usage.outputTokens, usage.usage.reasoningTokens] : [],
    [74, 68],
  );
  assert.equal(usage?.type === "usage" ? usage.usage.inputTokens + usage.usage.outputTokens : 0, 108);
});

test("stream: three parallel calls to one tool in separate chunks are three calls", async () => {
  const call = (path: string) => ({ functionCall: { name: "read_file", args: { path } } });
  upstream.enqueue(
    fakeGoogleReply.sse([
      buildGeminiChunk([{ ...call("a.ts"), thoughtSignature: "sig-1" }]),
      { delayMs: 10 },
      buildGeminiChunk([call("b.ts")]),
      buildGeminiChunk([call("c.ts")]),
      buildGeminiChunk([{ text: "" }], { finishReason: "STOP" }),
    ]),
  );
  const parts = await collect(callFor());
  const calls = parts.flatMap((part) => (part.type === "tool-call" ? [part] : []));
  assert.deepEqual(
    calls.map((item) => [item.index, item.name, item.arguments, item.providerState?.signature]),
    [
      [0, "read_file", '{"path":"a.ts"}', "sig-1"],
      [1, "read_file", '{"path":"b.ts"}', undefined],
      [2, "read_file", '{"path":"c.ts"}', undefined],
    ],
  );
  assert.equal(new Set(calls.map((item) => item.id)).size, 3);
  for (const item of calls) {
    const deltas = parts
      .map((part) => (part.type === "tool-input-delta" && part.id === item.id ? part.delta : ""))
      .join("");
    assert.equal(deltas, item.arguments);
  }
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "STOP" });
});

for (const [rawReason, reason] of [
  ["MAX_TOKENS", "length"],
  ["SAFETY", "content-filter"],
  ["MALFORMED_FUNCTION_CALL", "other"],
] as const) {
  test(`finishReason ${rawReason} → ${reason}, streamed and not`, async () => {
    const parts = rawReason === "SAFETY" ? [] : [{ text: "partial" }];
    upstream.enqueue(
      fakeGoogleReply.sse([buildGeminiChunk(parts, { finishReason: rawReason })]),
      fakeGoogleReply.json(buildGeminiChunk(parts, { finishReason: rawReason })),
    );
    assert.deepEqual((await collect(callFor())).at(-1), { type: "finish", reason, rawReason });
    const result = await adapter.generate(callFor());
    assert.equal(result.finishReason, reason);
    assert.equal(result.rawFinishReason, rawReason);
  });
}

test("a blocked prompt is content_filter, thrown before any part", async () => {
  const blocked = {
    promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
    usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
  };
  upstream.enqueue(fakeGoogleReply.sse([blocked]), fakeGoogleReply.json(blocked));
  await assert.rejects(collect(callFor()), { code: "content_filter" });
  await assert.rejects(adapter.generate(callFor()), { code: "content_filter" });
});

test("turn 2 sends the turn-1 signature back on the same part, byte-identical", async () => {
  const signature =
    "EpwICpkIAXLI2nxlU6gsWZaZHRYkX1orzuM8vSUFwaAt1JRxEC2hJzPAcAu3PWaKz7X+PIyTTqF+ZIQPF+fQzkaRCbrxB0Q=";
  upstream.enqueue(
    fakeGoogleReply.sse([
      buildGeminiChunk([{ functionCall: { name: "get_country", args: {} }, thoughtSignature: signature }]),
      buildGeminiChunk([{ text: "" }], { finishReason: "STOP" }),
    ]),
  );
  const tools = [
    { name: "get_country", parameters: { type: "object", properties: {}, additionalProperties: false } },
  ];
  const turn1 = await collect(callFor({ request: { tools } }));
  const call = turn1.find((part) => part.type === "tool-call");
  assert.ok(call?.type === "tool-call");

  upstream.enqueue(fakeGoogleReply.sse(buildGeminiTextChunks(["Mexico City."])));
  const before = upstream.requests.length;
  await collect(
    callFor({
      request: {
        tools,
        messages: [
          { role: "user", content: [{ type: "text", text: "Capital of my country? Call the tool" }] },
          {
            role: "assistant",
            content: [
              {
                type: "tool-call",
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                providerState: call.providerState,
              },
            ],
          },
          {
            role: "tool",
            content: [
              { type: "tool-result", toolCallId: call.id, content: [{ type: "text", text: "Mexico" }] },
            ],
          },
        ],
      },
    }),
  );
  const sent = upstream.requests[before]!.body;
  assert.deepEqual(sent.contents.slice(1), [
    {
      role: "model",
      parts: [{ functionCall: { name: "get_country", args: {} }, thoughtSignature: signature }],
    },
    { role: "user", parts: [{ functionResponse: { name: "get_country", response: { output: "Mexico" } } }] },
  ]);
  assert.ok(upstream.requests[before]!.rawBody.includes(`"thoughtSignature":"${signature}"`));
});
