/**
 * Replays the recorded Gemini traffic in `test/fixtures/recorded/google/gemini/` through the fake
 * upstream and the adapter. Expected values are computed from the recordings with a plain line
 * split, independent of the adapter's SSE reader and parser.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  type FakeGoogleUpstream,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../../../test/helpers/fake-google-upstream.js";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import type { CanonicalMessage, CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { foldStreamParts } from "../shared/fold-stream-parts.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createGoogleAdapter } from "./adapter.js";
import { buildGenerateContentBody } from "./build-request.js";

const fixtureDir = recordedPath("google", "gemini");
const fixtureFiles = readdirSync(fixtureDir).sort();
/** Vertex-only streamed arguments (`partialArgs`), which this adapter never requests. */
const VERTEX_PARTIAL_ARGS = "google-stream-tool-call-arguments.chunks.txt";

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

/** The fields of a recorded response chunk these tests read. */
interface RecordedChunk {
  candidates?: Array<{
    content?: {
      parts?: Array<{
        text?: string;
        thought?: boolean;
        thoughtSignature?: string;
        functionCall?: { name: string; args?: unknown };
      }>;
    };
    finishReason?: string;
  }>;
  usageMetadata?: { totalTokenCount?: number };
}

interface Expected {
  text: string;
  reasoning: string;
  calls: Array<{ name: string; args: unknown }>;
  signatures: string[];
  finishReason?: string;
  totalTokens?: number;
}

/** What the recording says, read with JSON.parse only. */
function computeExpected(payloads: RecordedChunk[]): Expected {
  const expected: Expected = { text: "", reasoning: "", calls: [], signatures: [] };
  for (const payload of payloads) {
    const candidate = payload.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.thoughtSignature === "string") expected.signatures.push(part.thoughtSignature);
      if (part.functionCall)
        expected.calls.push({ name: part.functionCall.name, args: part.functionCall.args ?? {} });
      else if (part.thought === true) expected.reasoning += part.text ?? "";
      else if (typeof part.text === "string") expected.text += part.text;
    }
    if (candidate?.finishReason) expected.finishReason = candidate.finishReason;
    if (payload.usageMetadata?.totalTokenCount !== undefined)
      expected.totalTokens = payload.usageMetadata.totalTokenCount;
  }
  return expected;
}

function payloadsOfSse(body: string): RecordedChunk[] {
  return body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
}

function callFor(upstreamModel = "gemini-replay", messages?: CanonicalMessage[]): UpstreamCall {
  const call = createTestCall({
    provider: { kind: "google", baseUrl: upstream.baseUrl, apiKey: "AIzaSyReplay" },
    request: messages === undefined ? {} : { messages },
  });
  call.upstreamModel = upstreamModel;
  return call;
}

async function streamParts(call = callFor()): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(call)) parts.push(part);
  return parts;
}

function assertResult(result: CanonicalResult, expected: Expected, name: string): void {
  const text = result.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("");
  const reasoning = result.content.flatMap((item) => (item.type === "reasoning" ? [item.text] : [])).join("");
  assert.equal(text, expected.text, `${name}: text reassembles`);
  assert.equal(reasoning, expected.reasoning, `${name}: reasoning reassembles`);
  const calls = result.content.flatMap((item) => (item.type === "tool-call" ? [item] : []));
  assert.deepEqual(
    calls.map((call) => ({ name: call.name, args: JSON.parse(call.arguments) })),
    expected.calls,
    `${name}: tool calls with valid JSON arguments`,
  );
  assert.equal(new Set(calls.map((call) => call.id)).size, calls.length, `${name}: distinct call ids`);
  const states = result.content.flatMap((item) =>
    "providerState" in item && item.providerState ? [item.providerState.signature] : [],
  );
  assert.deepEqual(states, expected.signatures, `${name}: every signature kept byte-identical, in order`);
  assert.ok(expected.finishReason !== undefined, `${name}: the recording has a finish reason`);
  assert.equal(result.rawFinishReason, expected.finishReason, `${name}: finish present`);
  assert.equal(
    result.usage.inputTokens + result.usage.outputTokens,
    expected.totalTokens,
    `${name}: input + output = totalTokenCount`,
  );
  assert.ok(result.usage.reasoningTokens <= result.usage.outputTokens);
}

function assertStream(parts: CanonicalStreamPart[], expected: Expected, name: string): void {
  assert.ok(!parts.some((part) => part.type === "error"), `${name}: no error part`);
  assert.equal(parts[0]?.type, "response-metadata", `${name}: metadata first`);
  assert.equal(parts.at(-1)?.type, "finish", `${name}: finish last`);
  assert.ok(
    !parts.some((part) => part.type === "text-delta" && part.delta === ""),
    `${name}: no empty deltas`,
  );
  for (const call of parts.flatMap((part) => (part.type === "tool-call" ? [part] : []))) {
    const deltas = parts
      .map((part) => (part.type === "tool-input-delta" && part.id === call.id ? part.delta : ""))
      .join("");
    assert.equal(deltas, call.arguments, `${name}: deltas reassemble to the call`);
  }
  assertResult(foldStreamParts(parts), expected, name);
}

const sseFiles = fixtureFiles.filter((file) => file.endsWith(".sse"));
const chunkFiles = fixtureFiles.filter(
  (file) => file.endsWith(".chunks.txt") && file !== VERTEX_PARTIAL_ARGS,
);
const responseFiles = fixtureFiles.filter((file) => file.endsWith(".response.json"));

test("recorded .sse streams (CRLF, no terminator) replay through the adapter", async (t) => {
  assert.ok(sseFiles.length >= 5);
  for (const file of sseFiles) {
    await t.test(file, async () => {
      const body = readFileSync(join(fixtureDir, file));
      assert.ok(body.includes("\r\n\r\n"), "CRLF framing in the recording");
      const expected = computeExpected(payloadsOfSse(body.toString("utf8")));
      // Odd-sized pieces split CRLF pairs, JSON and multi-byte characters at arbitrary points.
      upstream.enqueue(fakeGoogleReply.raw(body, { chunkSize: 53 }));
      assertStream(await streamParts(), expected, file);
    });
  }
});

test("recorded .chunks.txt payloads (re-framed as CRLF SSE) replay through the adapter", async (t) => {
  assert.ok(chunkFiles.length >= 3);
  for (const file of chunkFiles) {
    await t.test(file, async () => {
      const lines = readFileSync(join(fixtureDir, file), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
      const expected = computeExpected(lines.map((line) => JSON.parse(line)));
      upstream.enqueue(
        fakeGoogleReply.raw(lines.map((line) => `data: ${line}\r\n\r\n`).join(""), { chunkSize: 97 }),
      );
      assertStream(await streamParts(), expected, file);
    });
  }
});

test("the Vertex partialArgs recording is refused, not half-parsed", async () => {
  const lines = readFileSync(join(fixtureDir, VERTEX_PARTIAL_ARGS), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  upstream.enqueue(fakeGoogleReply.raw(lines.map((line) => `data: ${line}\r\n\r\n`).join("")));
  await assert.rejects(streamParts(), {
    code: "provider_unavailable",
    message: /partial function-call arguments/,
  });
});

test("recorded non-streamed responses parse through generate", async (t) => {
  assert.ok(responseFiles.length >= 5);
  for (const file of responseFiles) {
    await t.test(file, async () => {
      const body = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      upstream.enqueue(fakeGoogleReply.json(body));
      const result = await adapter.generate(callFor());
      assertResult(result, computeExpected([body]), file);
      assert.equal(result.upstreamModel, body.modelVersion);
      assert.equal(result.upstreamId, body.responseId);
      assert.equal(result.usage.cachedInputTokens, body.usageMetadata.cachedContentTokenCount ?? 0);
    });
  }
});

test("recorded 429 with RetryInfo → provider_rate_limit with its retry delay", async () => {
  const body = JSON.parse(readFileSync(join(fixtureDir, "google-429-retry-info.json"), "utf8"));
  upstream.enqueue(fakeGoogleReply.error(429, body));
  await assert.rejects(adapter.generate(callFor()), { code: "provider_rate_limit", retryAfterSeconds: 35 });
});

test("recorded round trips: turn 2 carries turn 1's signed parts unchanged", async (t) => {
  // Streamed single call (gemini-3-pro-preview) and non-streamed parallel calls (gemini-3-flash-preview).
  const cases = [
    { turn1: "stream-function-call-thought-signature.1.response.sse", model: "gemini-3-pro-preview" },
    { turn1: "parallel-function-calls-thought-signature.1.response.json", model: "gemini-3-flash-preview" },
  ];
  for (const { turn1, model } of cases) {
    await t.test(turn1, async () => {
      const raw = readFileSync(join(fixtureDir, turn1), "utf8");
      const recordedParts = (turn1.endsWith(".sse") ? payloadsOfSse(raw) : [JSON.parse(raw)]).flatMap(
        (payload: RecordedChunk) => payload.candidates?.[0]?.content?.parts ?? [],
      );
      let result: CanonicalResult;
      if (turn1.endsWith(".sse")) {
        upstream.enqueue(fakeGoogleReply.raw(raw, { chunkSize: 101 }));
        result = foldStreamParts(await streamParts(callFor(model)));
      } else {
        upstream.enqueue(fakeGoogleReply.json(JSON.parse(raw)));
        result = await adapter.generate(callFor(model));
      }
      const calls = result.content.flatMap((item) => (item.type === "tool-call" ? [item] : []));
      const messages: CanonicalMessage[] = [
        { role: "user", content: [{ type: "text", text: "Go" }] },
        { role: "assistant", content: result.content.map((item) => ({ ...item })) as never },
        {
          role: "tool",
          content: calls.map((call, index) => ({
            type: "tool-result" as const,
            toolCallId: call.id,
            content: [{ type: "text" as const, text: `result ${index}` }],
          })),
        },
      ];
      const body = buildGenerateContentBody(callFor(model, messages));
      // Gemini's empty signed text part keeps its place; empty unsigned text is not resent.
      const expectedModelParts = recordedParts.filter((part) => part.text !== "" || part.thoughtSignature);
      assert.deepEqual(body.contents[1], { role: "model", parts: expectedModelParts });
      assert.deepEqual(
        body.contents[2]?.parts.map((part) => ("functionResponse" in part ? part.functionResponse.name : "")),
        calls.map((call) => call.name),
      );
    });
  }
});
