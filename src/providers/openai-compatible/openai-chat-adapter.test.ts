/** The Chat Completions adapter under two dialects and with quirks, through the loopback fake. */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  buildChatCompletion,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import type { CanonicalMessage } from "../../canonical/index.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiCompatibleAdapter } from "./adapter.js";
import { createOpenAiChatAdapter } from "./openai-chat-adapter.js";

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();

before(async () => {
  upstream = await startFakeOpenAiUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

test("openai-chat: registered under its kind, sends OpenAI's rules for a reasoning model", async () => {
  const adapter = createOpenAiChatAdapter({ httpClient });
  assert.equal(adapter.kind, "openai-chat");
  assert.equal(createOpenAiCompatibleAdapter({ httpClient }).kind, "openai-compatible");
  const call = createTestCall({
    provider: { kind: "openai-chat", baseUrl: upstream.baseUrl },
    request: {
      system: [{ type: "text", text: "Be terse." }],
      sampling: { temperature: 0.1 },
      reasoning: { effort: "low" },
      user: "u1",
    },
  });
  call.model.features = ["reasoning"];
  upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "ok" })));
  const before = upstream.requests.length;
  const result = await adapter.generate(call);
  assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
  const { body } = upstream.requests[before];
  assert.equal(body.messages[0].role, "developer");
  assert.equal(body.reasoning_effort, "low");
  assert.equal(body.safety_identifier, "u1");
  assert.equal(body.temperature, undefined);
  assert.equal(body.max_completion_tokens, 1024);
});

test("alphanumeric-9 host: ids come back as sent, the next turn sends them rewritten and paired", async () => {
  const adapter = createOpenAiCompatibleAdapter({ httpClient });
  const provider = {
    baseUrl: upstream.baseUrl,
    quirks: {
      excludedParams: [],
      toolCallIdFormat: "alphanumeric-9" as const,
      maxTokensField: "max_tokens" as const,
    },
  };
  // Turn 1 history came from another provider (OpenAI ids); the host answers with its own id.
  const history: CanonicalMessage[] = [
    { role: "user", content: [{ type: "text", text: "Weather?" }] },
    {
      role: "assistant",
      content: [{ type: "tool-call", id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "weather", arguments: "{}" }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
          content: [{ type: "text", text: "sunny" }],
        },
      ],
    },
  ];
  upstream.enqueue(
    fakeReply.json(
      buildChatCompletion({ toolCalls: [{ id: "Qx7Lm2Pa9", name: "forecast", arguments: '{"d":1}' }] }),
    ),
  );
  const before = upstream.requests.length;
  const first = await adapter.generate(createTestCall({ provider, request: { messages: history } }));
  const sentFirst = upstream.requests[before].body;
  const rewritten = sentFirst.messages[1].tool_calls[0].id;
  assert.match(rewritten, /^[A-Za-z0-9]{9}$/);
  assert.equal(sentFirst.messages[2].tool_call_id, rewritten);
  assert.equal(sentFirst.max_tokens, 1024);
  assert.equal(sentFirst.max_completion_tokens, undefined);
  const returned = first.content.find((part) => part.type === "tool-call");
  assert.equal(returned?.type === "tool-call" ? returned.id : undefined, "Qx7Lm2Pa9");

  // Turn 2 replays both rounds: the earlier id maps the same way, the host's own id is kept.
  upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "done" })));
  await adapter.generate(
    createTestCall({
      provider,
      request: {
        messages: [
          ...history,
          {
            role: "assistant",
            content: [{ type: "tool-call", id: "Qx7Lm2Pa9", name: "forecast", arguments: '{"d":1}' }],
          },
          {
            role: "tool",
            content: [
              { type: "tool-result", toolCallId: "Qx7Lm2Pa9", content: [{ type: "text", text: "rain" }] },
            ],
          },
        ],
      },
    }),
  );
  const sentSecond = upstream.requests[before + 1].body;
  assert.equal(sentSecond.messages[1].tool_calls[0].id, rewritten);
  assert.equal(sentSecond.messages[2].tool_call_id, rewritten);
  assert.equal(sentSecond.messages[3].tool_calls[0].id, "Qx7Lm2Pa9");
  assert.equal(sentSecond.messages[4].tool_call_id, "Qx7Lm2Pa9");
});
