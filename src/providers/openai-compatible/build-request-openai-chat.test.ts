/** OpenAI's own rules (kind `openai-chat`) applied by the Chat Completions request builder. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { buildChatCompletionsRequest } from "./build-request.js";
import { OPENAI_CHAT_DIALECT } from "./chat-dialect.js";

const fullSampling = {
  temperature: 0.2,
  topP: 0.9,
  topK: 40,
  minP: 0.05,
  topA: 0.1,
  frequencyPenalty: 0.5,
  presencePenalty: -0.5,
  repetitionPenalty: 1.1,
  seed: 42,
  logitBias: { "50256": -100 },
  logprobs: true,
  topLogprobs: 3,
};

function openAiCall(reasoning: boolean, request: Partial<CanonicalRequest> = {}): UpstreamCall {
  const call = createTestCall({
    provider: { kind: "openai-chat" },
    request: {
      system: [{ type: "text", text: "Be terse." }],
      sampling: fullSampling,
      user: "user-7",
      verbosity: "low",
      reasoning: { effort: "high" },
      messages: [
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "thinking" },
            { type: "text", text: "Hello" },
          ],
        },
        { role: "user", content: [{ type: "text", text: "More" }] },
      ],
      ...request,
    },
  });
  call.model.features = reasoning ? ["tools", "reasoning"] : ["tools"];
  return call;
}

function bodyOf(call: UpstreamCall) {
  return buildChatCompletionsRequest(call, { stream: false, dialect: OPENAI_CHAT_DIALECT }).body;
}

test("reasoning model: developer role, reasoning_effort, no rejected sampling fields", () => {
  const body = bodyOf(openAiCall(true));
  assert.deepEqual(body.messages[0], { role: "developer", content: "Be terse." });
  assert.equal(body.reasoning_effort, "high");
  assert.equal(body.verbosity, "low");
  assert.equal(body.max_completion_tokens, 1024);
  for (const field of [
    "temperature",
    "top_p",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
  ]) {
    assert.equal(field in body, false, field);
  }
  assert.equal(body.seed, 42);
});

test("reasoning model at effort none keeps temperature, top_p and logprobs", () => {
  const body = bodyOf(openAiCall(true, { reasoning: { effort: "none" } }));
  assert.equal(body.reasoning_effort, "none");
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_p, 0.9);
  assert.equal(body.logprobs, true);
  assert.equal(body.top_logprobs, 3);
  assert.equal("frequency_penalty" in body, false);
  assert.equal("logit_bias" in body, false);
});

test("non-reasoning model: system role, sampling kept, no reasoning_effort or verbosity", () => {
  const body = bodyOf(openAiCall(false));
  assert.deepEqual(body.messages[0], { role: "system", content: "Be terse." });
  assert.equal(body.temperature, 0.2);
  assert.equal(body.frequency_penalty, 0.5);
  assert.deepEqual(body.logit_bias, { "50256": -100 });
  assert.equal("reasoning_effort" in body, false);
  assert.equal("verbosity" in body, false);
});

test("both: safety_identifier instead of user, no vLLM extensions, no reasoning text in history", () => {
  for (const reasoning of [true, false]) {
    const body = bodyOf(openAiCall(reasoning));
    assert.equal(body.safety_identifier, "user-7");
    assert.equal("user" in body, false);
    for (const field of ["top_k", "min_p", "top_a", "repetition_penalty"]) assert.equal(field in body, false);
    assert.deepEqual(body.messages[2], { role: "assistant", content: "Hello" });
  }
});

test("openai-compatible keeps forwarding everything the caller asked for", () => {
  const call = openAiCall(true);
  const { body } = buildChatCompletionsRequest(call, { stream: false });
  assert.deepEqual(body.messages[0], { role: "system", content: "Be terse." });
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_k, 40);
  assert.equal(body.user, "user-7");
  assert.deepEqual(body.messages[2], { role: "assistant", content: "Hello", reasoning: "thinking" });
});
