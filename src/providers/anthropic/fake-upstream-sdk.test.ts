/**
 * Guards the fake upstream itself: the official `@anthropic-ai/sdk` client (which dispatches on
 * `event:` names and accumulates strictly in `MessageStream`) must accept what its builders
 * produce, padding and pings included.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  anthropicReply,
  buildMessage,
  buildTextStream,
  buildUsage,
  DEFAULT_ANTHROPIC_REPLY_TEXT,
  errorEvent,
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

let upstream: FakeAnthropicUpstream;
let client: Anthropic;

before(async () => {
  upstream = await startFakeAnthropicUpstream();
  client = new Anthropic({ baseURL: upstream.origin, apiKey: "sk-ant-fake", maxRetries: 0 });
});

after(async () => {
  await upstream.close();
});

const params = { model: "claude-x", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };

test("the SDK's MessageStream accepts a built text stream with padding and pings", async () => {
  upstream.enqueue(anthropicReply.sse(buildTextStream(["Hel", "lo"]), { padding: true }));
  const message = await client.messages.stream(params).finalMessage();
  assert.deepEqual(
    message.content.map((block) => (block.type === "text" ? block.text : block.type)),
    ["Hello"],
  );
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.usage.output_tokens, 5);
  const request = upstream.requests.at(-1);
  assert.equal(request?.path, "/v1/messages");
  assert.equal(request?.body.stream, true);
});

test("the SDK accumulates built thinking and parallel tool_use blocks", async () => {
  upstream.enqueue(
    anthropicReply.sse([
      messageStartEvent(),
      ...thinkingBlockEvents(0, ["Two ", "calls."], "sig-abc"),
      pingEvent(),
      ...textBlockEvents(1, ["Checking."]),
      ...toolUseBlockEvents(2, { id: "toolu_a", name: "weather", fragments: ['{"city":', '"Paris"}'] }),
      ...toolUseBlockEvents(3, { id: "toolu_b", name: "clock", fragments: [""] }),
      messageDeltaEvent({ stopReason: "tool_use", usage: buildUsage({ output_tokens: 42 }) }),
      messageStopEvent(),
    ]),
  );
  const message = await client.messages.stream(params).finalMessage();
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "Two calls.", signature: "sig-abc" },
    { type: "text", text: "Checking." },
    { type: "tool_use", id: "toolu_a", name: "weather", input: { city: "Paris" } },
    { type: "tool_use", id: "toolu_b", name: "clock", input: {} },
  ]);
  assert.equal(message.stop_reason, "tool_use");
  assert.equal(message.usage.output_tokens, 42);
});

test("JSON, error envelopes, in-stream errors and the default reply reach the SDK as Anthropic sends them", async () => {
  upstream.enqueue(anthropicReply.json(buildMessage({ content: [{ type: "text", text: "json" }] })));
  const message = await client.messages.create(params);
  assert.deepEqual(message.content, [{ type: "text", text: "json" }]);

  upstream.enqueue(anthropicReply.overloaded());
  await assert.rejects(client.messages.create(params), (error: unknown) => {
    assert.ok(error instanceof Anthropic.APIError);
    assert.equal(error.status, 529);
    assert.equal(error.requestID, "req_011FakeUpstream0000000001");
    assert.deepEqual((error.error as { error?: unknown }).error, {
      type: "overloaded_error",
      message: "Overloaded",
    });
    return true;
  });

  upstream.enqueue(anthropicReply.error(429, "rate_limit_error", "slow down", { "retry-after": "3" }));
  await assert.rejects(
    client.messages.create(params),
    (error: unknown) => error instanceof Anthropic.RateLimitError && error.headers.get("retry-after") === "3",
  );

  upstream.enqueue(
    anthropicReply.sse([messageStartEvent(), ...textBlockEvents(0, ["partial"]), errorEvent()], {
      padding: true,
    }),
  );
  await assert.rejects(client.messages.stream(params).finalMessage(), /Overloaded/);

  const fallback = await client.messages.create(params);
  assert.deepEqual(fallback.content, [{ type: "text", text: DEFAULT_ANTHROPIC_REPLY_TEXT }]);
  const streamed = await client.messages.stream(params).finalText();
  assert.equal(streamed, DEFAULT_ANTHROPIC_REPLY_TEXT);
});
