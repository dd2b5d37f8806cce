/**
 * Guards the fake upstream itself: the official `openai` client (whose stream helper throws on
 * malformed chunk sequences) must accept what its builders produce.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  DEFAULT_REPLY_TEXT,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";

let upstream: FakeOpenAiUpstream;
let client: OpenAI;

before(async () => {
  upstream = await startFakeOpenAiUpstream();
  client = new OpenAI({ baseURL: upstream.baseUrl, apiKey: "sk-fake", maxRetries: 0 });
});

after(async () => {
  await upstream.close();
});

test("the SDK's stream helper accepts a built text stream", async () => {
  upstream.enqueue(fakeReply.sse(buildTextChunks(["Hel", "lo"])));
  const stream = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }] });
  const completion = await stream.finalChatCompletion();
  assert.equal(completion.choices[0].message.content, "Hello");
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.equal(upstream.requests.at(-1)?.body.stream, true);
});

test("the SDK's stream helper accepts a built tool-call stream", async () => {
  upstream.enqueue(
    fakeReply.sse([
      buildChunk({
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }],
      }),
      buildChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      buildChunk({}, { finishReason: "tool_calls" }),
      buildUsageChunk(),
    ]),
  );
  const stream = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }] });
  const completion = await stream.finalChatCompletion();
  const call = completion.choices[0].message.tool_calls?.[0];
  assert.equal(call?.type === "function" ? call.function.arguments : undefined, '{"a":1}');
});

test("JSON, error and default replies reach the SDK as OpenAI would send them", async () => {
  upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "json" })));
  const completion = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
  });
  assert.equal(completion.choices[0].message.content, "json");

  upstream.enqueue(
    fakeReply.error(429, { error: { message: "slow", type: "rate_limit_error" } }, { "retry-after": "3" }),
  );
  await assert.rejects(
    client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    (error: unknown) => error instanceof OpenAI.RateLimitError && error.headers.get("retry-after") === "3",
  );

  const fallback = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
  });
  assert.equal(fallback.choices[0].message.content, DEFAULT_REPLY_TEXT);
});
