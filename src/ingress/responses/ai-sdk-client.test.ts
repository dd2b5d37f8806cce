/**
 * The Vercel AI SDK's OpenAI Responses provider as a second official client: it parses our stream and
 * body with its own schemas, and its replay of a turn is what our decoder must take back.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import type { CanonicalStreamPart, CanonicalUsage } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const context: ResponsesEncodeContext = {
  requestId: "req_5",
  model: "anthropic/claude-opus-4.1",
  createdAt: 1,
};
const usage: CanonicalUsage = {
  inputTokens: 10,
  outputTokens: 20,
  cachedInputTokens: 2,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 5,
};
const state = { providerKind: "anthropic", upstreamModel: "claude-opus-4-1", signature: "EqQBCkgIAxABGAIiQ" };

const tools = { lookup: tool({ inputSchema: jsonSchema<{ q: string }>({ type: "object" }) }) };

/** A provider whose every call is answered by `respond`; request bodies are collected. */
function createProvider(respond: () => Response) {
  const bodies: Array<Record<string, unknown>> = [];
  const provider = createOpenAI({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    fetch: async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      return respond();
    },
  });
  return { provider, bodies };
}

test("streamText reads reasoning (with encrypted content), text, a tool call and usage from our stream", async () => {
  const encoder = createResponsesStreamEncoder(context);
  const parts: CanonicalStreamPart[] = [
    { type: "reasoning-delta", id: "r", delta: "Look it up." },
    { type: "reasoning-end", id: "r", providerState: state },
    { type: "text-delta", id: "t", delta: "Searching." },
    { type: "tool-input-start", id: "call_1", index: 0, name: "lookup" },
    { type: "tool-input-delta", id: "call_1", delta: '{"q":"x"}' },
    { type: "tool-call", id: "call_1", index: 0, name: "lookup", arguments: '{"q":"x"}' },
  ];
  let sse = "";
  for (const part of parts) sse += encoder.push(part);
  sse += encoder.finish({ usage, costMicroUsd: 10, finishReason: "tool-calls" });
  const { provider } = createProvider(
    () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
  );

  const result = streamText({ model: provider.responses("gpt-5"), prompt: "Find x", tools });
  const reasoningEnds: unknown[] = [];
  for await (const part of result.fullStream) {
    if (part.type === "error") assert.fail(String(part.error));
    if (part.type === "reasoning-end")
      reasoningEnds.push(part.providerMetadata?.openai?.reasoningEncryptedContent);
  }
  assert.equal(await result.text, "Searching.");
  assert.equal(await result.reasoningText, "Look it up.");
  assert.equal(await result.finishReason, "tool-calls");
  const [call] = await result.toolCalls;
  assert.deepEqual([call.toolCallId, call.toolName, call.input], ["call_1", "lookup", { q: "x" }]);
  assert.equal(reasoningEnds.length, 1);
  assert.equal(typeof reasoningEnds[0], "string");
  const totals = await result.usage;
  assert.deepEqual([totals.inputTokens, totals.outputTokens, totals.reasoningTokens], [10, 20, 5]);
});

test("a stateless AI SDK replay (store: false) decodes back to the identical reasoning state", async () => {
  const firstTurn = encodeResponsesResult(
    {
      content: [
        { type: "reasoning", text: "Look it up.", providerState: state },
        { type: "tool-call", id: "call_1", name: "lookup", arguments: '{"q":"x"}' },
      ],
      finishReason: "tool-calls",
      usage,
    },
    { usage, costMicroUsd: 10, finishReason: "tool-calls" },
    context,
  );
  const { provider, bodies } = createProvider(() => Response.json(firstTurn));
  const executing = { lookup: tool({ ...tools.lookup, execute: async () => "found" }) };
  await generateText({
    model: provider.responses("gpt-5"),
    prompt: "Find x",
    tools: executing,
    stopWhen: ({ steps }) => steps.length >= 2,
    providerOptions: { openai: { store: false } },
  });
  const replay = decodeResponsesRequest({ ...bodies[1], model: "anthropic/claude-opus-4.1" });
  assert.deepEqual(replay.messages.slice(1), [
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Look it up.", providerState: state },
        { type: "tool-call", id: "call_1", name: "lookup", arguments: '{"q":"x"}' },
      ],
    },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "call_1", content: [{ type: "text", text: "found" }] }],
    },
  ]);

  // Without store: false the SDK sends a reference to the item; one whose id does not carry it (here
  // no item seal at all) is a clear 400 naming the item, not a silently reasoning-less turn.
  // (Sealed ids that resolve: test/conformance/ai-sdk-item-references.test.ts.)
  await generateText({
    model: provider.responses("gpt-5"),
    prompt: "Find x",
    tools: executing,
    stopWhen: ({ steps }) => steps.length >= 2,
  });
  assert.throws(
    () => decodeResponsesRequest({ ...bodies[3], model: "anthropic/claude-opus-4.1" }),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.param === "input[1].id" &&
      /item_reference to "rs_req_5_0".*store: false/.test(error.message),
  );
});
