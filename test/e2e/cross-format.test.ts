/**
 * The Responses and Messages endpoints through their official clients, against a model served by
 * an OpenAI-compatible upstream: the cross-format path through the hub.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  fakeReply,
} from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL } from "../helpers/test-gateway.js";

forEachGatewayMode(
  "responses and messages formats over an OpenAI-compatible upstream",
  async (context, t) => {
    const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });

    await t.test("responses.create: output_text, usage, resp_ id", async () => {
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Hi from responses" })));
      const { data, response } = await context.openai.responses
        .create({ model: TEST_MODEL, input: "hello", instructions: "Be nice" })
        .withResponse();
      assert.equal(data.id, `resp_${response.headers.get("x-request-id")}`);
      assert.equal(data.status, "completed");
      assert.equal(data.output_text, "Hi from responses");
      assert.equal(data.usage?.input_tokens, 10);
      const body = context.upstream.requests.at(-1)!.body;
      assert.deepEqual(body.messages[0], { role: "system", content: "Be nice" });
    });

    await t.test("responses.stream: function call arguments reassembled", async () => {
      context.upstream.enqueue(
        fakeReply.sse([
          buildChunk({ role: "assistant", content: null }),
          buildChunk({
            tool_calls: [
              { index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: "" } },
            ],
          }),
          buildChunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
          buildChunk({ tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] }),
          buildChunk({}, { finishReason: "tool_calls" }),
          buildUsageChunk(),
        ]),
      );
      const stream = context.openai.responses.stream({
        model: TEST_MODEL,
        input: [{ role: "user", content: "find cats" }],
        tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
      });
      const final = await stream.finalResponse();
      const call = final.output.find((item) => item.type === "function_call");
      assert.ok(call && call.type === "function_call");
      assert.equal(call.arguments, '{"q":"cats"}');
      assert.equal(call.call_id, "call_1");
    });

    await t.test("responses rejects stateful fields naming them", async () => {
      await assert.rejects(
        context.openai.responses.create({ model: TEST_MODEL, input: "x", previous_response_id: "resp_1" }),
        (error: unknown) =>
          error instanceof OpenAI.BadRequestError &&
          (error.error as { param: string }).param === "previous_response_id",
      );
    });

    await t.test("messages.create through the Anthropic SDK (x-api-key and Bearer)", async () => {
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Hello from messages" })));
      const message = await anthropic.messages.create({
        model: TEST_MODEL,
        max_tokens: 100,
        system: "Be brief",
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(message.type, "message");
      assert.match(message.id, /^msg_/);
      assert.deepEqual(message.content, [{ type: "text", text: "Hello from messages" }]);
      assert.equal(message.stop_reason, "end_turn");
      assert.equal(context.upstream.requests.at(-1)!.body.max_completion_tokens, 100);

      const viaHeader = await fetch(`${context.url}/api/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": context.apiKey, "content-type": "application/json" },
        body: JSON.stringify({
          model: TEST_MODEL,
          max_tokens: 10,
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      assert.equal(viaHeader.status, 200);
    });

    await t.test(
      "messages.stream().finalMessage(): text then tool_use with stop_reason tool_use",
      async () => {
        context.upstream.enqueue(
          fakeReply.sse([
            buildChunk({ role: "assistant", content: "" }),
            buildChunk({ content: "Let me check." }),
            buildChunk({
              tool_calls: [
                {
                  index: 0,
                  id: "call_9",
                  type: "function",
                  function: { name: "weather", arguments: '{"city":' },
                },
              ],
            }),
            buildChunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
            buildChunk({}, { finishReason: "tool_calls" }),
            buildUsageChunk({
              prompt_tokens: 50,
              completion_tokens: 12,
              total_tokens: 62,
              prompt_tokens_details: { cached_tokens: 20 },
            }),
          ]),
        );
        const final = await anthropic.messages
          .stream({
            model: TEST_MODEL,
            max_tokens: 200,
            messages: [{ role: "user", content: "Weather in Oslo?" }],
            tools: [
              { name: "weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
            ],
          })
          .finalMessage();
        assert.equal(final.stop_reason, "tool_use");
        assert.equal(final.content[0].type, "text");
        assert.equal((final.content[0] as Anthropic.TextBlock).text, "Let me check.");
        assert.equal(final.content[1].type, "tool_use");
        assert.deepEqual((final.content[1] as Anthropic.ToolUseBlock).input, { city: "Oslo" });
        assert.equal(final.usage.input_tokens, 30, "Anthropic input_tokens exclude cache reads");
        assert.equal(final.usage.cache_read_input_tokens, 20);
        assert.equal(final.usage.output_tokens, 12);
      },
    );

    await t.test("messages errors use the messages envelope; count_tokens is free", async () => {
      const bad = await anthropic.messages
        .create({ model: "nobody/none", max_tokens: 5, messages: [{ role: "user", content: "x" }] })
        .catch((error: unknown) => error);
      assert.ok(bad instanceof Anthropic.BadRequestError);
      const body = bad.error as { type: string; error: { type: string; code: string } };
      assert.equal(body.type, "error");
      assert.equal(body.error.type, "invalid_request_error");
      assert.equal(body.error.code, "invalid_request");

      const before = context.upstream.requests.length;
      const counted = await anthropic.messages.countTokens({
        model: TEST_MODEL,
        system: "You are a helpful assistant with a long system prompt.",
        messages: [{ role: "user", content: "How many tokens is this?" }],
      });
      assert.ok(counted.input_tokens > 10);
      assert.equal(context.upstream.requests.length, before, "no upstream call");
    });

    await t.test("Anthropic streaming from a text upstream", async () => {
      context.upstream.enqueue(fakeReply.sse(buildTextChunks(["One", " two"])));
      const events: string[] = [];
      const stream = await anthropic.messages.create({
        model: TEST_MODEL,
        max_tokens: 50,
        stream: true,
        messages: [{ role: "user", content: "count" }],
      });
      let text = "";
      for await (const event of stream) {
        events.push(event.type);
        if (event.type === "content_block_delta" && event.delta.type === "text_delta")
          text += event.delta.text;
      }
      assert.equal(text, "One two");
      assert.equal(events[0], "message_start");
      assert.equal(events.at(-1), "message_stop");
    });
  },
);
