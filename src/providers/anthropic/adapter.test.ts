import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall, createTestModel } from "../../../test/helpers/adapter-inputs.js";
import {
  anthropicReply,
  buildMessage,
  buildTextStream,
  buildUsage,
  type FakeAnthropicUpstream,
  messageDeltaEvent,
  messageStartEvent,
  messageStopEvent,
  pingEvent,
  startFakeAnthropicUpstream,
  textBlockEvents,
  thinkingBlockEvents,
  toolUseBlockEvents,
} from "../../../test/helpers/fake-anthropic-upstream.js";
import type { AssistantContentPart, CanonicalRequest, CanonicalStreamPart } from "../../canonical/index.js";
import type { ModelFeature, ProviderConfig } from "../../catalog/types.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createAnthropicAdapter } from "./adapter.js";

let upstream: FakeAnthropicUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createAnthropicAdapter({ httpClient });

before(async () => {
  upstream = await startFakeAnthropicUpstream();
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
    features?: ModelFeature[];
  } = {},
): UpstreamCall {
  const call = createTestCall({
    request: options.request,
    provider: {
      kind: "anthropic",
      baseUrl: upstream.baseUrl,
      apiKey: "sk-ant-test-0123456789",
      ...options.provider,
    },
    signal: options.signal,
  });
  return { ...call, model: { ...createTestModel(), features: options.features ?? ["tools", "streaming"] } };
}

async function collect(call: UpstreamCall): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(call)) parts.push(part);
  return parts;
}

function textOf(parts: CanonicalStreamPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
}

test("kind is anthropic", () => {
  assert.equal(adapter.kind, "anthropic");
});

test("generate: sends the Messages request and parses the answer", async () => {
  upstream.enqueue(
    anthropicReply.json(
      buildMessage({ content: [{ type: "text", text: "Bonjour" }], model: "claude-x-2025" }),
    ),
  );
  const before = upstream.requests.length;
  const result = await adapter.generate(callFor({ request: { anthropicBeta: ["context-1m-2025-08-07"] } }));
  const request = upstream.requests[before];
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/v1/messages");
  assert.equal(request.headers["x-api-key"], "sk-ant-test-0123456789");
  assert.equal(request.headers["anthropic-version"], "2023-06-01");
  assert.equal(request.headers["anthropic-beta"], "context-1m-2025-08-07");
  assert.equal(request.headers["content-type"], "application/json");
  assert.equal(request.headers.authorization, undefined);
  assert.deepEqual(request.body, {
    model: "upstream-model-1",
    max_tokens: 1024,
    messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
  });
  assert.deepEqual(result.content, [{ type: "text", text: "Bonjour" }]);
  assert.equal(result.upstreamModel, "claude-x-2025");
  assert.equal(result.finishReason, "stop");
  assert.equal(result.usage.inputTokens, 10);
});

test("generate: prompt-cache usage golden (3 + 1111 read + 418 written) and 1-hour writes", async () => {
  upstream.enqueue(
    anthropicReply.json(
      buildMessage({
        usage: buildUsage({
          input_tokens: 3,
          cache_read_input_tokens: 1111,
          cache_creation_input_tokens: 418,
          cache_creation: { ephemeral_5m_input_tokens: 418, ephemeral_1h_input_tokens: 0 },
          output_tokens: 33,
        }),
      }),
    ),
    anthropicReply.json(
      buildMessage({
        usage: buildUsage({
          input_tokens: 3,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 1529,
          cache_creation: { ephemeral_5m_input_tokens: 418, ephemeral_1h_input_tokens: 1111 },
          output_tokens: 33,
        }),
      }),
    ),
  );
  assert.deepEqual((await adapter.generate(callFor())).usage, {
    inputTokens: 1532,
    outputTokens: 33,
    cachedInputTokens: 1111,
    cacheWriteTokens: 418,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  });
  assert.deepEqual((await adapter.generate(callFor())).usage, {
    inputTokens: 1532,
    outputTokens: 33,
    cachedInputTokens: 0,
    cacheWriteTokens: 418,
    cacheWrite1hTokens: 1111,
    reasoningTokens: 0,
  });
});

test("stream: padded text stream with pings, `stream: true` sent", async () => {
  upstream.enqueue(anthropicReply.sse(buildTextStream(["Hel", "lo ", "wörld"]), { padding: true }));
  const before = upstream.requests.length;
  const parts = await collect(callFor());
  const request = upstream.requests[before];
  assert.equal(request.body.stream, true);
  assert.equal(request.headers.accept, "text/event-stream");
  assert.equal(parts[0].type, "response-metadata");
  assert.equal(textOf(parts), "Hello wörld");
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "stop", rawReason: "end_turn" });
});

test("stream: thinking with signature, then text; the next turn forwards the signature byte-identical", async () => {
  const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/8=";
  upstream.enqueue(
    anthropicReply.sse(
      [
        messageStartEvent(),
        ...thinkingBlockEvents(0, ["Capital of ", "France."], signature),
        pingEvent(),
        ...textBlockEvents(1, ["Paris."]),
        messageDeltaEvent({ usage: { output_tokens: 60, output_tokens_details: { thinking_tokens: 40 } } }),
        messageStopEvent(),
      ],
      { padding: true },
    ),
  );
  const reasoningCall = (messages?: CanonicalRequest["messages"]) =>
    callFor({
      request: { reasoning: { effort: "low" }, ...(messages === undefined ? {} : { messages }) },
      features: ["reasoning"],
    });
  const parts = await collect({ ...reasoningCall(), maxOutputTokens: 4096 });
  const end = parts.find((part) => part.type === "reasoning-end");
  assert.deepEqual(end, {
    type: "reasoning-end",
    id: "reasoning-0",
    providerState: { providerKind: "anthropic", upstreamModel: "upstream-model-1", signature },
  });
  assert.equal(textOf(parts), "Paris.");
  const usage = parts.findLast((part) => part.type === "usage");
  assert.equal(usage?.type === "usage" ? usage.usage.reasoningTokens : -1, 40);

  // Turn 2 replays the assistant turn as an ingress would decode it.
  const reasoningText = parts
    .flatMap((part) => (part.type === "reasoning-delta" ? [part.delta] : []))
    .join("");
  const assistant: AssistantContentPart[] = [
    {
      type: "reasoning",
      text: reasoningText,
      providerState: end?.type === "reasoning-end" ? end.providerState : undefined,
    },
    { type: "text", text: textOf(parts) },
  ];
  upstream.enqueue(anthropicReply.json(buildMessage()));
  const before = upstream.requests.length;
  await adapter.generate({
    ...reasoningCall([
      { role: "user", content: [{ type: "text", text: "Capital of France?" }] },
      { role: "assistant", content: assistant },
      { role: "user", content: [{ type: "text", text: "And Italy?" }] },
    ]),
    maxOutputTokens: 4096,
  });
  const sent = upstream.requests[before].body;
  assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.deepEqual(sent.messages[1].content[0], {
    type: "thinking",
    thinking: "Capital of France.",
    signature,
  });
  assert.ok(upstream.requests[before].rawBody.includes(JSON.stringify(signature)));
});

test("stream: parallel tool_use with input_json_delta and a no-argument tool", async () => {
  upstream.enqueue(
    anthropicReply.sse([
      messageStartEvent(),
      ...textBlockEvents(0, ["Checking both."]),
      ...toolUseBlockEvents(1, {
        id: "toolu_01A",
        name: "get_weather",
        fragments: ["", '{"location": "San', ' Francisco, CA"', ', "unit": "celsius"}'],
      }),
      ...toolUseBlockEvents(2, { id: "toolu_01B", name: "get_time", fragments: [""] }),
      messageDeltaEvent({ stopReason: "tool_use", usage: { output_tokens: 91 } }),
      messageStopEvent(),
    ]),
  );
  const parts = await collect(
    callFor({ request: { tools: [{ name: "get_weather" }, { name: "get_time" }] } }),
  );
  const calls = parts.flatMap((part) =>
    part.type === "tool-call" ? [[part.id, part.index, part.name, part.arguments]] : [],
  );
  assert.deepEqual(calls, [
    ["toolu_01A", 0, "get_weather", '{"location": "San Francisco, CA", "unit": "celsius"}'],
    ["toolu_01B", 1, "get_time", "{}"],
  ]);
  for (const [id, , , args] of calls) {
    assert.doesNotThrow(() => JSON.parse(String(args)));
    const deltas = parts
      .map((part) => (part.type === "tool-input-delta" && part.id === id ? part.delta : ""))
      .join("");
    assert.equal(deltas, args);
  }
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "tool-calls", rawReason: "tool_use" });
});

test("stream: cumulative usage over two message_delta events is not summed", async () => {
  upstream.enqueue(
    anthropicReply.sse(
      buildTextStream(["x"], {
        startUsage: buildUsage({ input_tokens: 472, output_tokens: 2 }),
        deltaUsage: { output_tokens: 7 },
      }).flatMap((step) =>
        "data" in step && (step.data as { type?: string }).type === "message_delta"
          ? [{ data: messageDeltaEvent({ stopReason: null, usage: { output_tokens: 4 } }) }, step]
          : [step],
      ),
    ),
  );
  const usage = (await collect(callFor())).findLast((part) => part.type === "usage");
  assert.deepEqual(
    usage?.type === "usage" ? [usage.usage.inputTokens, usage.usage.outputTokens] : [],
    [472, 7],
  );
});

test("stream: max_tokens, refusal and pause_turn finish reasons", async () => {
  const cases: Array<[string, string]> = [
    ["max_tokens", "length"],
    ["refusal", "refusal"],
    ["pause_turn", "pause"],
  ];
  for (const [raw, reason] of cases) {
    upstream.enqueue(
      anthropicReply.sse(buildTextStream(raw === "refusal" ? [] : ["partial"], { stopReason: raw })),
    );
    assert.deepEqual((await collect(callFor())).at(-1), { type: "finish", reason, rawReason: raw });
  }
});

test("structured output: the forced JSON tool goes out, its input comes back as text", async () => {
  const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
  const request = { responseFormat: { type: "json_schema" as const, name: "city", schema } };
  upstream.enqueue(
    anthropicReply.json(
      buildMessage({
        content: [{ type: "tool_use", id: "toolu_j", name: "json_response", input: { city: "Oslo" } }],
      }),
    ),
    anthropicReply.sse([
      messageStartEvent(),
      ...toolUseBlockEvents(0, { id: "toolu_j", name: "json_response", fragments: ['{"city":', '"Oslo"}'] }),
      messageDeltaEvent({ stopReason: "tool_use" }),
      messageStopEvent(),
    ]),
  );
  const before = upstream.requests.length;
  const result = await adapter.generate(callFor({ request }));
  const body = upstream.requests[before].body;
  assert.deepEqual(body.tool_choice, {
    type: "tool",
    name: "json_response",
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(body.tools[0].input_schema, schema);
  assert.deepEqual(result.content, [{ type: "text", text: '{"city":"Oslo"}' }]);
  assert.equal(result.finishReason, "stop");

  const parts = await collect(callFor({ request }));
  assert.equal(textOf(parts), '{"city":"Oslo"}');
  assert.ok(!parts.some((part) => part.type === "tool-call"));
  assert.deepEqual(parts.at(-1), { type: "finish", reason: "stop", rawReason: "tool_use" });
});

test("a relay that answers a stream request with JSON still yields a well-formed stream", async () => {
  upstream.enqueue(
    anthropicReply.json(
      buildMessage({
        content: [
          { type: "thinking", thinking: "hm", signature: "sig" },
          { type: "text", text: "whole" },
        ],
        stopReason: "stop_sequence",
        stopSequence: "###",
      }),
    ),
  );
  const parts = await collect(callFor());
  assert.deepEqual(
    parts.map((part) => part.type),
    [
      "response-metadata",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-end",
      "usage",
      "finish",
    ],
  );
  assert.deepEqual(parts.at(-1), {
    type: "finish",
    reason: "stop-sequence",
    stopSequence: "###",
    rawReason: "stop_sequence",
  });
});

test("generate: a body that is not JSON → provider_unavailable", async () => {
  upstream.enqueue(anthropicReply.raw("<html>gateway</html>", { headers: { "content-type": "text/html" } }));
  await assert.rejects(adapter.generate(callFor()), { code: "provider_unavailable" });
});
