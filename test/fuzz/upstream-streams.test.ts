/**
 * Fuzzed upstream answers for every provider kind: event streams broken at the frame and byte
 * level (test/helpers/fuzz-upstream.ts) through the SSE reader and each kind's stream parser, and
 * mutated JSON bodies through each kind's JSON parser; then both through the adapters themselves
 * (the shared HTTP skeleton) with an in-memory upstream. Properties:
 * - a parser either finishes cleanly (canonical lifecycles, `finish` last, usage countable) or
 *   throws a GatewayError with a catalog code; the only other error it may throw is the body's own
 *   (a reset connection), unchanged, for the adapter to classify;
 * - an adapter's stream ends with `finish` or one classified `error` part, or throws a
 *   GatewayError before its first part; `generate` returns a result or throws a GatewayError;
 * - nothing hangs (each run has a deadline).
 * Run counts, seeds and replay: test/helpers/fuzz.ts.
 */
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { test } from "node:test";
import fc from "fast-check";
import type { CanonicalStreamPart } from "../../src/canonical/index.js";
import { GatewayError, isErrorCode } from "../../src/errors/gateway-error.js";
import { createAnthropicAdapter } from "../../src/providers/anthropic/adapter.js";
import { parseAnthropicResponse } from "../../src/providers/anthropic/parse-response.js";
import { parseAnthropicStream } from "../../src/providers/anthropic/parse-stream.js";
import { createGoogleAdapter } from "../../src/providers/google/adapter.js";
import { parseGenerateContentResponse } from "../../src/providers/google/parse-response.js";
import { parseGenerateContentStream } from "../../src/providers/google/parse-stream.js";
import { createOpenAiCompatibleAdapter } from "../../src/providers/openai-compatible/adapter.js";
import { parseChatCompletionsResponse } from "../../src/providers/openai-compatible/parse-response.js";
import { parseChatCompletionsStream } from "../../src/providers/openai-compatible/parse-stream.js";
import { createOpenAiResponsesAdapter } from "../../src/providers/openai-responses/adapter.js";
import { parseResponsesResponse } from "../../src/providers/openai-responses/parse-response.js";
import { parseResponsesStream } from "../../src/providers/openai-responses/parse-stream.js";
import type { ProviderAdapter } from "../../src/providers/provider-adapter.js";
import type { UpstreamBody, UpstreamHttpClient } from "../../src/providers/shared/http-client.js";
import { readSseEvents, type SseEvent } from "../../src/providers/shared/sse-reader.js";
import { createTestCall } from "../helpers/adapter-inputs.js";
import { checkProperty } from "../helpers/fuzz.js";
import { malformedBodyTexts, mutatedBodies } from "../helpers/fuzz-bodies.js";
import {
  brokenFrames,
  checkPartSequence,
  checkUsage,
  framesToBytes,
  replayBytes,
  type UpstreamBytes,
  type UpstreamKind,
  VALID_BODIES,
} from "../helpers/fuzz-upstream.js";

const RUNS = 200;
const DEADLINE_MS = 5_000;
const MODEL = "upstream-model-1";

interface KindUnderTest {
  parseStream(events: AsyncIterable<SseEvent>): AsyncIterable<CanonicalStreamPart>;
  parseJson(json: unknown): {
    content: unknown[];
    usage: import("../../src/canonical/index.js").CanonicalUsage;
  };
  createAdapter(httpClient: UpstreamHttpClient): ProviderAdapter;
  providerKind: string;
}

const KINDS: Record<UpstreamKind, KindUnderTest> = {
  "openai-chat": {
    parseStream: (events) => parseChatCompletionsStream(events),
    parseJson: (json) => parseChatCompletionsResponse(json),
    createAdapter: (httpClient) => createOpenAiCompatibleAdapter({ httpClient }),
    providerKind: "openai-compatible",
  },
  "openai-responses": {
    parseStream: (events) => parseResponsesStream(events, { upstreamModel: MODEL }),
    parseJson: (json) => parseResponsesResponse(json, { upstreamModel: MODEL }),
    createAdapter: (httpClient) => createOpenAiResponsesAdapter({ httpClient }),
    providerKind: "openai-responses",
  },
  anthropic: {
    parseStream: (events) => parseAnthropicStream(events, { upstreamModel: MODEL }),
    parseJson: (json) => parseAnthropicResponse(json, { upstreamModel: MODEL }),
    createAdapter: (httpClient) => createAnthropicAdapter({ httpClient }),
    providerKind: "anthropic",
  },
  google: {
    parseStream: (events) => parseGenerateContentStream(events, { upstreamModel: MODEL }),
    parseJson: (json) => parseGenerateContentResponse(json, { upstreamModel: MODEL }),
    createAdapter: (httpClient) => createGoogleAdapter({ httpClient }),
    providerKind: "google",
  },
};

function describeBytes(bytes: UpstreamBytes): string {
  const text = Buffer.concat(bytes.chunks).toString("utf8");
  return `${JSON.stringify(text.length > 1500 ? `${text.slice(0, 1500)}…(${text.length})` : text)}${
    bytes.failure ? " + reset" : ""
  }`;
}

function isClassified(error: unknown): error is GatewayError {
  return (
    error instanceof GatewayError &&
    isErrorCode(error.code) &&
    (error.upstreamStatus === undefined || Number.isInteger(error.upstreamStatus))
  );
}

/** A stream answer: SSE bytes, or (an upstream that ignored stream: true) one JSON body. */
interface StreamAnswer {
  bytes: UpstreamBytes;
  contentType: string;
}

function streamAnswers(kind: UpstreamKind): fc.Arbitrary<StreamAnswer> {
  const sse = brokenFrames(kind)
    .chain(framesToBytes)
    .map((bytes) => ({ bytes, contentType: "text/event-stream" }));
  const json = jsonTexts(kind).map((text) => ({
    bytes: { chunks: [Buffer.from(text, "utf8")] },
    contentType: "application/json",
  }));
  return fc.oneof({ weight: 5, arbitrary: sse }, { weight: 1, arbitrary: json });
}

function jsonTexts(kind: UpstreamKind): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: mutatedBodies(VALID_BODIES[kind]()).map(({ text }) => text) },
    {
      weight: 1,
      arbitrary: malformedBodyTexts.map((body) =>
        typeof body === "string" ? body : Buffer.from(body).toString("latin1"),
      ),
    },
  );
}

/** An upstream that answers every request with the given bytes (no sockets). */
function createInMemoryClient(answer: StreamAnswer): UpstreamHttpClient {
  const headers = { "content-type": answer.contentType };
  return {
    async send() {
      return {
        status: 200,
        headers,
        body: Readable.from(replayBytes(answer.bytes)) as unknown as UpstreamBody,
      };
    },
    async sendForText() {
      return { status: 200, headers, text: Buffer.concat(answer.bytes.chunks).toString("utf8") };
    },
    async close() {},
    async destroy() {},
  };
}

for (const [kind, under] of Object.entries(KINDS) as Array<[UpstreamKind, KindUnderTest]>) {
  test(`fuzzed upstream streams through the ${kind} stream parser`, async (t) => {
    await checkProperty(
      t,
      fc.asyncProperty(
        brokenFrames(kind).chain(framesToBytes),
        fc.constantFrom(undefined, 64 * 1024),
        async (bytes, maxEventSize) => {
          const what = describeBytes(bytes);
          const parts: CanonicalStreamPart[] = [];
          let thrown: unknown;
          try {
            const events = readSseEvents(
              replayBytes(bytes),
              maxEventSize === undefined ? {} : { maxEventSize },
            );
            for await (const part of under.parseStream(events)) parts.push(part);
          } catch (error) {
            thrown = error;
          }
          if (thrown !== undefined && thrown !== bytes.failure) {
            assert.ok(
              isClassified(thrown),
              `threw ${String((thrown as Error)?.stack ?? thrown)}\non ${what}`,
            );
          }
          checkPartSequence(parts, what);
          if (thrown === undefined)
            assert.equal(parts.at(-1)?.type, "finish", `ended without finish: ${what}`);
        },
      ),
      { runs: RUNS, timeoutMs: DEADLINE_MS },
    );
  });

  test(`fuzzed upstream JSON bodies through the ${kind} JSON parser`, async (t) => {
    await checkProperty(
      t,
      fc.property(jsonTexts(kind), (text) => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          return; // The adapter refuses a body that is not JSON before any parser sees it.
        }
        try {
          const result = under.parseJson(json);
          checkUsage(result.usage, text.slice(0, 500));
        } catch (error) {
          assert.ok(
            isClassified(error),
            `threw ${String((error as Error)?.stack ?? error)}\non ${text.slice(0, 1500)}`,
          );
        }
      }),
      { runs: RUNS },
    );
  });

  test(`fuzzed upstream answers through the ${kind} adapter`, async (t) => {
    await checkProperty(
      t,
      fc.asyncProperty(streamAnswers(kind), fc.boolean(), async (answer, stream) => {
        const what = describeBytes(answer.bytes);
        const adapter = under.createAdapter(createInMemoryClient(answer));
        const call = createTestCall({ provider: { kind: under.providerKind as never } });
        if (!stream) {
          try {
            const result = await adapter.generate(call);
            checkUsage(result.usage, what);
          } catch (error) {
            assert.ok(
              isClassified(error),
              `generate threw ${String((error as Error)?.stack ?? error)}\non ${what}`,
            );
          }
          return;
        }
        const parts: CanonicalStreamPart[] = [];
        try {
          for await (const part of adapter.stream(call)) parts.push(part);
        } catch (error) {
          assert.ok(
            isClassified(error),
            `stream threw ${String((error as Error)?.stack ?? error)}\non ${what}`,
          );
          assert.equal(parts.length, 0, `threw after its first part: ${what}`);
          return;
        }
        const last = parts.at(-1);
        assert.ok(last?.type === "finish" || last?.type === "error", `ended with ${last?.type}: ${what}`);
        if (last.type === "error")
          assert.ok(isErrorCode(last.error.code), `error part code ${last.error.code}: ${what}`);
        assert.equal(
          parts.filter((part) => part.type === "error").length,
          last.type === "error" ? 1 : 0,
          what,
        );
        checkPartSequence(last.type === "error" ? parts.slice(0, -1) : parts, what);
      }),
      { runs: RUNS, timeoutMs: DEADLINE_MS },
    );
  });
}
