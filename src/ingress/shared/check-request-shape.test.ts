import assert from "node:assert/strict";
import { test } from "node:test";
import { checkRequestShape } from "./check-request-shape.js";

const LIMITS = { maxMessages: 10, maxContentParts: 20, maxTools: 3 };
const messages = (count: number, content: unknown = "hi") =>
  Array.from({ length: count }, () => ({ role: "user", content }));

test("within the caps: nothing to say", () => {
  checkRequestShape({ messages: messages(10), tools: [{}, {}, {}] }, "chat_completions", LIMITS);
  checkRequestShape({ input: "just a string" }, "responses", LIMITS);
  checkRequestShape("not even an object", "anthropic_messages", LIMITS);
});

test("too many messages, input items or tools: invalid_request naming the field", () => {
  assert.throws(() => checkRequestShape({ messages: messages(11) }, "chat_completions", LIMITS), {
    code: "invalid_request",
    param: "messages",
    message: "messages has 11 items; at most 10 are accepted",
  });
  assert.throws(() => checkRequestShape({ input: messages(11) }, "responses", LIMITS), { param: "input" });
  assert.throws(
    () => checkRequestShape({ messages: [], tools: [{}, {}, {}, {}] }, "anthropic_messages", LIMITS),
    {
      param: "tools",
    },
  );
});

test("content blocks are counted across messages, tool results and the system list", () => {
  const blocks = (count: number) => Array.from({ length: count }, () => ({ type: "text", text: "x" }));
  assert.throws(() => checkRequestShape({ messages: messages(3, blocks(7)) }, "chat_completions", LIMITS), {
    param: "messages[2].content",
  });
  const toolResult = [{ type: "tool_result", content: blocks(20) }];
  assert.throws(
    () => checkRequestShape({ messages: messages(1, toolResult) }, "anthropic_messages", LIMITS),
    {
      param: "messages[0].content",
    },
  );
  assert.throws(
    () =>
      checkRequestShape(
        { system: blocks(15), messages: messages(1, blocks(6)) },
        "anthropic_messages",
        LIMITS,
      ),
    { param: "messages[0].content" },
  );
  const output = [{ type: "function_call_output", output: blocks(21) }];
  assert.throws(() => checkRequestShape({ input: output }, "responses", LIMITS), {
    param: "input[0].content",
  });
});
