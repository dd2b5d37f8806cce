/** The `openai-responses` adapter against the loopback fake Responses upstream. */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  buildFailureEvents,
  buildResponse,
  buildResponseEvents,
  type FakeOpenAiUpstream,
  fakeReply,
  numberEvents,
  type ResponseSpec,
  responsesReply,
  startFakeOpenAiResponsesUpstream,
} from "../../../test/helpers/fake-openai-responses-upstream.js";
import type {
  AssistantContentPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalStreamPart,
  ReasoningPart,
} from "../../canonical/index.js";
import type { ProviderConfig } from "../../catalog/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { unwrapOpaqueState, wrapOpaqueState } from "../../ingress/opaque-state.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiResponsesAdapter } from "./adapter.js";

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createOpenAiResponsesAdapter({ httpClient });

before(async () => {
  upstream = await startFakeOpenAiResponsesUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

function callFor(
  options: {
    request?: Partial<CanonicalRequest>;
    provider?: Partial<ProviderConfig>;
    signal?: AbortSignal;
    reasoning?: boolean;
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: { kind: "openai-responses", baseUrl: upstream.baseUrl, ...options.provider },
    signal: options.signal,
  });
  call.upstreamModel = "gpt-5";
  if (options.reasoning) call.model.features = ["tools", "reasoning"];
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

/** The assistant turn a client would send back: the result's content, as canonical parts. */
function assistantTurnFrom(parts: CanonicalStreamPart[]): CanonicalMessage {
  const content: AssistantContentPart[] = [];
  const texts = new Map<string, string>();
  for (const part of parts) {
    if (part.type === "reasoning-delta" || part.type === "text-delta") {
      texts.set(part.id, (texts.get(part.id) ?? "") + part.delta);
    }
    if (part.type === "reasoning-end") {
      content.push({ type: "reasoning", text: texts.get(part.id) ?? "", providerState: part.providerState });
    }
    if (part.type === "text-end") content.push({ type: "text", text: texts.get(part.id) ?? "" });
    if (part.type === "tool-call") {
      content.push({ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments });
    }
  }
  return { role: "assistant", content };
}

const ENCRYPTED = "gAAAAABoyXusnBzv6TRLFFsi09D2XC4A5Jod6AOAtsnxA4Vdp6sHIAr4B0UwlKwAdOwh-Lx6Ltdw==";

const reasoningTurn: ResponseSpec = {
  items: [
    {
      type: "reasoning",
      id: "rs_abc",
      summary: [["Need ", "weather."]],
      encryptedContent: ENCRYPTED,
      encryptedContentAdded: "early",
    },
    { type: "function_call", name: "weather", arguments: ['{"city":', '"Paris"}'], callId: "call_P" },
    { type: "function_call", name: "weather", arguments: '{"city":"Rome"}', callId: "call_R" },
  ],
};

test("generate: text through POST /responses with a bearer key and a stateless body", async () => {
  upstream.enqueue(responsesReply.json(buildResponse({ items: [{ type: "message", text: "Bonjour" }] })));
  const before = upstream.requests.length;
  const result = await adapter.generate(
    callFor({ request: { system: [{ type: "text", text: "Be brief." }] } }),
  );
  const request = upstream.requests[before];
  assert.equal(adapter.kind, "openai-responses");
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/v1/responses");
  assert.equal(request.headers.authorization, "Bearer sk-test-key-0123456789");
  assert.equal(request.body.store, false);
  assert.equal(request.body.instructions, "Be brief.");
  assert.equal(request.body.stream, undefined);
  assert.deepEqual(result.content, [{ type: "text", text: "Bonjour" }]);
  assert.equal(result.finishReason, "stop");
  assert.equal(result.usage.inputTokens, 12);
});

test("stream: text deltas, usage, finish", async () => {
  upstream.enqueue(
    responsesReply.sse(buildResponseEvents({ items: [{ type: "message", text: ["Hel", "lo"] }] })),
  );
  const before = upstream.requests.length;
  const parts = await collect(callFor());
  assert.equal(upstream.requests[before].body.stream, true);
  assert.equal(upstream.requests[before].headers.accept, "text/event-stream");
  assert.equal(parts[0].type, "response-metadata");
  assert.equal(textOf(parts), "Hello");
  assert.deepEqual(
    parts.slice(-2).map((part) => part.type),
    ["usage", "finish"],
  );
});

for (const mode of ["stream", "generate"] as const) {
  test(`${mode}: reasoning round trip, turn 1 → turn 2 with encrypted content byte-identical`, async () => {
    upstream.enqueue(
      mode === "stream"
        ? responsesReply.sse(buildResponseEvents(reasoningTurn))
        : responsesReply.json(buildResponse(reasoningTurn)),
    );
    const user: CanonicalMessage = {
      role: "user",
      content: [{ type: "text", text: "Weather in Paris and Rome?" }],
    };
    const first = upstream.requests.length;
    const turn1 = callFor({ reasoning: true, request: { messages: [user], reasoning: { effort: "low" } } });
    let assistant: CanonicalMessage;
    if (mode === "stream") {
      assistant = assistantTurnFrom(await collect(turn1));
    } else {
      const result = await adapter.generate(turn1);
      assistant = { role: "assistant", content: result.content as AssistantContentPart[] };
      assert.equal(result.finishReason, "tool-calls");
    }
    const sent1 = upstream.requests[first].body;
    assert.deepEqual(sent1.include, ["reasoning.encrypted_content"]);
    assert.deepEqual(sent1.reasoning, { effort: "low", summary: "auto" });

    // The state crosses the client as an opaque string and comes back.
    const reasoning = assistant.content[0] as ReasoningPart;
    assert.equal(reasoning.providerState?.encryptedContent, ENCRYPTED);
    const carried = unwrapOpaqueState(
      wrapOpaqueState(reasoning.providerState!),
      "openai-responses",
      "encryptedContent",
    );
    const replayed: CanonicalMessage = {
      role: "assistant",
      content: [
        { ...reasoning, providerState: carried },
        ...(assistant.content.slice(1) as AssistantContentPart[]),
      ],
    };
    upstream.enqueue(responsesReply.json(buildResponse({ items: [{ type: "message", text: "Sunny." }] })));
    await adapter.generate(
      callFor({
        reasoning: true,
        request: {
          messages: [
            user,
            replayed,
            {
              role: "tool",
              content: [
                { type: "tool-result", toolCallId: "call_P", content: [{ type: "text", text: "18°C" }] },
                { type: "tool-result", toolCallId: "call_R", content: [{ type: "text", text: "21°C" }] },
              ],
            },
          ],
        },
      }),
    );
    const turn2 = upstream.requests[first + 1];
    assert.deepEqual(turn2.body.input.slice(1), [
      {
        type: "reasoning",
        id: "rs_abc",
        summary: [{ type: "summary_text", text: "Need weather." }],
        encrypted_content: ENCRYPTED,
      },
      { type: "function_call", call_id: "call_P", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "call_R", name: "weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "call_P", output: "18°C" },
      { type: "function_call_output", call_id: "call_R", output: "21°C" },
    ]);
    // Byte-identical on the wire, not just equal after parsing.
    assert.ok(turn2.rawBody.includes(JSON.stringify(ENCRYPTED)));
  });
}

test("foreign state is dropped: the same turn replayed to another model or kind sends no reasoning", async () => {
  const assistant: CanonicalMessage = {
    role: "assistant",
    content: [
      {
        type: "reasoning",
        text: "Need weather.",
        providerState: {
          providerKind: "openai-responses",
          upstreamModel: "gpt-5",
          encryptedContent: ENCRYPTED,
          itemId: "rs_abc",
        },
      },
      {
        type: "reasoning",
        text: "Claude's view",
        providerState: { providerKind: "anthropic", upstreamModel: "claude-x", signature: "sig" },
      },
      { type: "text", text: "Hello" },
    ],
  };
  upstream.enqueue(responsesReply.json(buildResponse()));
  const before = upstream.requests.length;
  const call = callFor({ reasoning: true, request: { messages: [assistant] } });
  call.upstreamModel = "gpt-5-mini";
  await adapter.generate(call);
  const { body, rawBody } = upstream.requests[before];
  assert.deepEqual(body.input, [
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
  ]);
  assert.ok(!rawBody.includes(ENCRYPTED) && !rawBody.includes("sig") && !rawBody.includes("Claude"));
});

test("stream: parallel function calls with their indexes and arguments", async () => {
  upstream.enqueue(responsesReply.sse(buildResponseEvents(reasoningTurn)));
  const parts = await collect(callFor({ reasoning: true }));
  const calls = parts.flatMap((part) =>
    part.type === "tool-call" ? [[part.id, part.index, part.name, part.arguments]] : [],
  );
  assert.deepEqual(calls, [
    ["call_P", 0, "weather", '{"city":"Paris"}'],
    ["call_R", 1, "weather", '{"city":"Rome"}'],
  ]);
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "completed" });
});

test("structured output: text.format sent, the JSON text comes back", async () => {
  const answer = '{"city":"Paris","temperature":18}';
  upstream.enqueue(
    responsesReply.sse(
      buildResponseEvents({ items: [{ type: "message", text: [answer.slice(0, 9), answer.slice(9)] }] }),
    ),
  );
  const before = upstream.requests.length;
  const parts = await collect(
    callFor({
      request: {
        responseFormat: { type: "json_schema", name: "weather", schema: { type: "object" }, strict: true },
      },
    }),
  );
  assert.deepEqual(upstream.requests[before].body.text, {
    format: { type: "json_schema", name: "weather", schema: { type: "object" }, strict: true },
  });
  assert.deepEqual(JSON.parse(textOf(parts)), { city: "Paris", temperature: 18 });
});

test("incomplete at max_output_tokens: length in both modes", async () => {
  const spec: ResponseSpec = {
    status: "incomplete",
    incompleteReason: "max_output_tokens",
    items: [{ type: "message", text: ["The ans"] }],
  };
  upstream.enqueue(responsesReply.sse(buildResponseEvents(spec)), responsesReply.json(buildResponse(spec)));
  const parts = await collect(callFor());
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "length", rawReason: "max_output_tokens" });
  const result = await adapter.generate(callFor());
  assert.equal(result.finishReason, "length");
  assert.deepEqual(result.content, [{ type: "text", text: "The ans" }]);
});

test("HTTP errors are classified GatewayErrors for generate and before the first stream part", async () => {
  const rateLimited = {
    error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" },
  };
  const quota = {
    error: {
      message: "You exceeded your current quota",
      type: "insufficient_quota",
      param: null,
      code: "insufficient_quota",
    },
  };
  upstream.enqueue(
    fakeReply.error(429, rateLimited, { "retry-after": "3" }),
    fakeReply.error(429, rateLimited),
  );
  await assert.rejects(adapter.generate(callFor()), { code: "provider_rate_limit", retryAfterSeconds: 3 });
  await assert.rejects(
    collect(callFor()),
    (error) => error instanceof GatewayError && error.upstreamStatus === 429,
  );
  // The gateway's own OpenAI account is out of quota: not the caller's rate limit.
  upstream.enqueue(fakeReply.error(429, quota));
  await assert.rejects(adapter.generate(callFor()), { code: "provider_auth" });
  const invalid = {
    error: {
      message: "Invalid 'temperature': decimal below minimum value.",
      type: "invalid_request_error",
      param: "temperature",
      code: "decimal_below_min_value",
    },
  };
  upstream.enqueue(fakeReply.error(400, invalid));
  await assert.rejects(collect(callFor()), { code: "invalid_request", param: "temperature" });
});

test("error event before any output is thrown (retryable as a plain error), not an error part", async () => {
  upstream.enqueue(
    responsesReply.sse(
      numberEvents([
        ...buildResponseEvents().slice(0, 2),
        ...buildFailureEvents({ code: "server_error", message: "boom" }),
      ]),
    ),
  );
  await assert.rejects(collect(callFor()), { code: "provider_unavailable" });
});

test("error mid-stream: the text so far, then an error part, no finish", async () => {
  const events = buildResponseEvents({ items: [{ type: "message", text: ["Par", "is", "!"] }] });
  const cut = events.findIndex((event) => event.type === "response.output_text.delta") + 2;
  upstream.enqueue(
    responsesReply.sse(
      numberEvents([
        ...events.slice(0, cut),
        ...buildFailureEvents({ code: "rate_limit_exceeded", message: "Slow down" }),
      ]),
    ),
  );
  const parts = await collect(callFor());
  assert.equal(textOf(parts), "Paris");
  const last = parts.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_rate_limit");
  assert.ok(!parts.some((part) => part.type === "finish"));
});

test("a stream cut without a terminal event, or by a socket close, ends in an error part", async () => {
  const events = buildResponseEvents({ items: [{ type: "message", text: ["Hi", " there"] }] });
  upstream.enqueue(responsesReply.sse(events.slice(0, -1)));
  const cut = await collect(callFor());
  assert.deepEqual(cut.at(-1)?.type === "error" ? [cut.at(-1)?.type, textOf(cut)] : cut.at(-1), [
    "error",
    "Hi there",
  ]);

  upstream.enqueue(responsesReply.sse([...events.slice(0, 5), { delayMs: 50 }, { closeSocket: true }]));
  const closed = await collect(callFor());
  const last = closed.at(-1);
  assert.equal(last?.type === "error" ? last.error.code : last?.type, "provider_unavailable");
});

test("first-byte deadline → provider_timeout", async () => {
  upstream.enqueue(fakeReply.hang(), fakeReply.hang());
  const provider = { timeouts: { connectMs: 1000, firstByteMs: 150, responseMs: 150, idleMs: 5000 } };
  await assert.rejects(adapter.generate(callFor({ provider })), { code: "provider_timeout" });
  await assert.rejects(collect(callFor({ provider })), { code: "provider_timeout" });
});

test("abort mid-stream stops quietly and closes the upstream connection", async () => {
  const events = buildResponseEvents({ items: [{ type: "message", text: ["first", "never"] }] });
  const firstDelta = events.findIndex((event) => event.type === "response.output_text.delta");
  upstream.enqueue(
    responsesReply.sse([
      ...events.slice(0, firstDelta + 1),
      { delayMs: 5000 },
      ...events.slice(firstDelta + 1),
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
  const request = upstream.requests[before];
  await request.closed;
  assert.equal(request.closedBeforeEnd, true);
});

test("a request the format cannot express fails before any upstream call", async () => {
  const before = upstream.requests.length;
  await assert.rejects(adapter.generate(callFor({ request: { stop: ["END"] } })), {
    code: "invalid_request",
    param: "stop",
  });
  await assert.rejects(collect(callFor({ request: { stop: ["END"] } })), { code: "invalid_request" });
  assert.equal(upstream.requests.length, before);
});

test("a server answering a stream request with JSON still yields a well-formed stream, state included", async () => {
  upstream.enqueue(responsesReply.json(buildResponse(reasoningTurn)));
  const parts = await collect(callFor({ reasoning: true }));
  const end = parts.find((part) => part.type === "reasoning-end");
  assert.equal(end?.type === "reasoning-end" ? end.providerState?.encryptedContent : undefined, ENCRYPTED);
  assert.equal(parts.at(-1)?.type, "finish");
});

test("text then a 100 KB tool call: text block closed first, arguments byte-exact", async () => {
  const value = "ünïcødé 👋 ".repeat(8_000);
  const args = JSON.stringify({ content: value });
  const pieces: string[] = [];
  for (let offset = 0; offset < args.length; offset += 997) pieces.push(args.slice(offset, offset + 997));
  upstream.enqueue(
    responsesReply.sse(
      buildResponseEvents({
        items: [
          { type: "message", text: ["Writing ", "the file."] },
          { type: "function_call", name: "write_file", arguments: pieces, callId: "call_W" },
        ],
      }),
    ),
  );
  const parts = await collect(callFor());
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("text-end") < types.indexOf("tool-input-start"));
  assert.equal(textOf(parts), "Writing the file.");
  const call = parts.find((part) => part.type === "tool-call");
  assert.equal(call?.type === "tool-call" ? call.arguments : undefined, args);
  const deltas = parts.flatMap((part) => (part.type === "tool-input-delta" ? [part.delta] : [])).join("");
  assert.equal(deltas, args);
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "completed" });
});
