/**
 * Failure paths of the `google` adapter against the fake upstream: HTTP errors (Gemini envelope),
 * in-stream errors, truncated streams, resets, deadlines and aborts.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  buildGeminiChunk,
  buildGeminiError,
  type FakeGoogleUpstream,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../../../test/helpers/fake-google-upstream.js";
import type { CanonicalRequest, CanonicalStreamPart } from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
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

const retryInfo = [
  {
    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
    violations: [{ quotaId: "GenerateRequestsPerMinute" }],
  },
  { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" },
];

for (const [status, body, code, retryAfter] of [
  [
    429,
    buildGeminiError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", retryInfo),
    "provider_rate_limit",
    35,
  ],
  [
    400,
    buildGeminiError(400, "INVALID_ARGUMENT", 'Invalid JSON payload received. Unknown name "foo".'),
    "invalid_request",
    undefined,
  ],
  [
    400,
    buildGeminiError(
      400,
      "INVALID_ARGUMENT",
      "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ),
    "context_length_exceeded",
    undefined,
  ],
  [
    400,
    buildGeminiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "API_KEY_INVALID",
        domain: "googleapis.com",
      },
    ]),
    "provider_auth",
    undefined,
  ],
  [
    403,
    buildGeminiError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
    "provider_auth",
    undefined,
  ],
  [
    401,
    buildGeminiError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
    "provider_auth",
    undefined,
  ],
  [500, buildGeminiError(500, "INTERNAL", "An internal error has occurred."), "provider_unavailable", 1],
  [
    503,
    buildGeminiError(503, "UNAVAILABLE", "The service is currently unavailable."),
    "provider_unavailable",
    1,
  ],
  [
    503,
    buildGeminiError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "provider_overloaded",
    1,
  ],
  [
    504,
    buildGeminiError(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
    "provider_timeout",
    1,
  ],
] as const) {
  test(`HTTP ${status} ${body.error.status} "${body.error.message.slice(0, 24)}…" → ${code}`, async () => {
    upstream.enqueue(fakeGoogleReply.error(status, body), fakeGoogleReply.error(status, body));
    const expected = (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, code);
      assert.equal(error.upstreamStatus, status);
      assert.equal(error.retryAfterSeconds, retryAfter);
      assert.doesNotMatch(error.message, /AIza/);
      return true;
    };
    await assert.rejects(adapter.generate(callFor()), expected);
    await assert.rejects(collect(callFor()), expected);
  });
}

test("an invalid-argument message is passed to the caller", async () => {
  upstream.enqueue(
    fakeGoogleReply.error(
      400,
      buildGeminiError(
        400,
        "INVALID_ARGUMENT",
        "* GenerateContentRequest.contents: contents is not specified",
      ),
    ),
  );
  await assert.rejects(adapter.generate(callFor()), {
    code: "invalid_request",
    message: /contents is not specified/,
  });
});

test("mid-stream error frame: thrown before content, an error part after it", async () => {
  const frame = buildGeminiError(503, "UNAVAILABLE", "The service is currently unavailable.");
  upstream.enqueue(fakeGoogleReply.sse([frame]));
  await assert.rejects(collect(callFor()), { code: "provider_unavailable" });

  upstream.enqueue(
    fakeGoogleReply.sse([buildGeminiChunk([{ text: "Hi" }]), frame, buildGeminiChunk([{ text: "ignored" }])]),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.deepEqual(last?.type === "error" ? [last.error.code, last.error.upstreamStatus] : last, [
    "provider_unavailable",
    503,
  ]);
  assert.ok(!parts.some((part) => part.type === "finish"));
});

test("a stream that ends without finishReason → error part", async () => {
  upstream.enqueue(fakeGoogleReply.sse([buildGeminiChunk([{ text: "Hi" }])]));
  const parts = await collect(callFor());
  const last = parts.at(-1);
  assert.deepEqual(last?.type === "error" ? [last.error.code, last.error.message] : last, [
    "provider_unavailable",
    "upstream stream ended early",
  ]);
});

test("socket closed mid-stream → provider_unavailable error part", async () => {
  upstream.enqueue(
    fakeGoogleReply.sse([buildGeminiChunk([{ text: "Hi" }]), { delayMs: 50 }, { closeSocket: true }]),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hi");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_unavailable");
});

test("deadlines: first byte → provider_timeout thrown; stall after content → error part", async () => {
  upstream.enqueue(fakeGoogleReply.hang(), fakeGoogleReply.hang());
  const slow = { timeouts: { connectMs: 1000, firstByteMs: 150, responseMs: 150, idleMs: 5000 } };
  await assert.rejects(adapter.generate(callFor({ provider: slow })), { code: "provider_timeout" });
  await assert.rejects(collect(callFor({ provider: slow })), { code: "provider_timeout" });

  upstream.enqueue(fakeGoogleReply.sse([buildGeminiChunk([{ text: "Par" }]), { hang: true }]));
  const parts = await collect(
    callFor({
      provider: { timeouts: { connectMs: 1000, firstByteMs: 2000, responseMs: 2000, idleMs: 200 } },
    }),
  );
  assert.equal(textOf(parts), "Par");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_timeout");
});

test("abort mid-stream stops quietly and closes the upstream connection", async () => {
  upstream.enqueue(
    fakeGoogleReply.sse([
      buildGeminiChunk([{ text: "first" }]),
      { delayMs: 5000 },
      buildGeminiChunk([{ text: "never" }], { finishReason: "STOP" }),
    ]),
  );
  const controller = new AbortController();
  const before = upstream.requests.length;
  const parts: CanonicalStreamPart[] = [];
  const started = Date.now();
  for await (const part of adapter.stream(callFor({ signal: controller.signal }))) {
    parts.push(part);
    if (part.type === "text-delta") controller.abort();
  }
  assert.ok(Date.now() - started < 3000, "the stream ended at once");
  assert.equal(textOf(parts), "first");
  assert.ok(!parts.some((part) => part.type === "error" || part.type === "finish"));
  const request = upstream.requests[before]!;
  await request.closed;
  assert.equal(request.closedBeforeEnd, true);
});

test("abort while waiting for headers: the stream ends empty, generate rejects with the reason", async () => {
  upstream.enqueue(fakeGoogleReply.hang(), fakeGoogleReply.hang());
  const streamController = new AbortController();
  setTimeout(() => streamController.abort(), 100);
  assert.deepEqual(await collect(callFor({ signal: streamController.signal })), []);
  const generateController = new AbortController();
  const reason = new Error("cancelled by client");
  setTimeout(() => generateController.abort(reason), 100);
  await assert.rejects(
    adapter.generate(callFor({ signal: generateController.signal })),
    (error) => error === reason,
  );
});

test("a stream request answered with a JSON array (alt=sse lost on the way) still streams", async () => {
  upstream.enqueue(
    fakeGoogleReply.json([
      buildGeminiChunk([{ text: "Hel" }]),
      buildGeminiChunk([{ text: "lo" }], { finishReason: "STOP" }),
    ]),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Hello");
  assert.equal(parts.at(-1)?.type, "finish");
});

test("generate: a body that is not JSON → provider_unavailable", async () => {
  upstream.enqueue(fakeGoogleReply.raw("<html>proxy</html>", { headers: { "content-type": "text/html" } }));
  await assert.rejects(adapter.generate(callFor()), { code: "provider_unavailable" });
});
