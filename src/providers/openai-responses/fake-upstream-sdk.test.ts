/**
 * Guards the fake Responses upstream itself: the official `openai` client, whose stream
 * accumulator throws on missing items, mismatched indexes and unknown event types, must accept
 * what its builders produce, and must see a mid-stream failure as OpenAI's own.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import {
  buildFailureEvents,
  buildResponse,
  buildResponseEvents,
  DEFAULT_RESPONSE_TEXT,
  type FakeOpenAiUpstream,
  fakeReply,
  responsesReply,
  startFakeOpenAiResponsesUpstream,
} from "../../../test/helpers/fake-openai-responses-upstream.js";

let upstream: FakeOpenAiUpstream;
let client: OpenAI;

before(async () => {
  upstream = await startFakeOpenAiResponsesUpstream();
  client = new OpenAI({ baseURL: upstream.baseUrl, apiKey: "sk-fake", maxRetries: 0 });
});

after(async () => {
  await upstream.close();
});

const richSpec = {
  items: [
    {
      type: "reasoning" as const,
      summary: [["Think", "ing"], "More"],
      encryptedContent: "enc-done",
      encryptedContentAdded: "enc-added",
    },
    { type: "message" as const, text: ["Hel", "lo"] },
    { type: "function_call" as const, name: "lookup", arguments: ['{"q":', '"x"}'], callId: "call_1" },
    { type: "function_call" as const, name: "lookup", arguments: '{"q":"y"}', callId: "call_2" },
  ],
};

test("the SDK's stream accumulator accepts a built stream and sees the final output", async () => {
  upstream.enqueue(responsesReply.sse(buildResponseEvents(richSpec)));
  const stream = client.responses.stream({ model: "m", input: "hi" });
  const events = [];
  for await (const event of stream) events.push(event);
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    [...events.keys()],
  );
  const last = events.at(-1);
  assert.deepEqual(last?.type === "response.completed" ? last.response : last, buildResponse(richSpec));
  const response = await stream.finalResponse();
  assert.equal(response.output_text, "Hello");
  assert.deepEqual(
    response.output.map((item) => item.type),
    ["reasoning", "message", "function_call", "function_call"],
  );
  const reasoning = response.output[0];
  assert.equal(reasoning.type === "reasoning" ? reasoning.encrypted_content : undefined, "enc-done");
});

test("JSON replies and the default reply parse as SDK responses", async () => {
  upstream.enqueue(responsesReply.json(buildResponse({ items: [{ type: "message", text: "json" }] })));
  assert.equal((await client.responses.create({ model: "m", input: "hi" })).output_text, "json");
  assert.equal(
    (await client.responses.create({ model: "m", input: "hi" })).output_text,
    DEFAULT_RESPONSE_TEXT,
  );
  const streamed = await client.responses.stream({ model: "m", input: "hi" }).finalResponse();
  assert.equal(streamed.output_text, DEFAULT_RESPONSE_TEXT);
});

test("an error event mid-stream reaches the SDK as an APIError", async () => {
  const events = buildResponseEvents().slice(0, 2);
  upstream.enqueue(
    responsesReply.sse([...events, ...buildFailureEvents({ code: "server_error", message: "boom" })]),
  );
  await assert.rejects(client.responses.stream({ model: "m", input: "hi" }).finalResponse(), (error) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.match(error.message, /boom/);
    return true;
  });
});

test("HTTP errors reach the SDK with their status", async () => {
  upstream.enqueue(fakeReply.error(429, { error: { message: "slow", type: "rate_limit_error" } }));
  await assert.rejects(client.responses.create({ model: "m", input: "hi" }), OpenAI.RateLimitError);
});
