import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestCall, createTestModel } from "../../../test/helpers/adapter-inputs.js";
import type { CanonicalMessage, CanonicalRequest } from "../../canonical/index.js";
import type { ModelFeature } from "../../catalog/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { buildAnthropicRequest } from "./build-request.js";
import { EFFORT_BUDGET_TOKENS } from "./resolve-thinking.js";

function reasoningCall(
  request: Partial<CanonicalRequest>,
  options: { maxOutputTokens?: number; features?: ModelFeature[] } = {},
): UpstreamCall {
  return {
    ...createTestCall({ request, provider: { kind: "anthropic" } }),
    model: { ...createTestModel(), features: options.features ?? ["tools", "reasoning"] },
    maxOutputTokens: options.maxOutputTokens ?? 64_000,
  };
}

function bodyOf(call: UpstreamCall) {
  return buildAnthropicRequest(call, { stream: false }).body;
}

function assertInvalid(call: UpstreamCall, param: string, message: RegExp): void {
  assert.throws(
    () => bodyOf(call),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, param);
      assert.match(error.message, message);
      return true;
    },
  );
}

test("explicit budget → thinking enabled with that budget", () => {
  const body = bodyOf(reasoningCall({ reasoning: { budgetTokens: 3000 } }, { maxOutputTokens: 4096 }));
  assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 3000 });
  assert.equal(body.max_tokens, 4096);
});

test("explicit budget below 1024 or not below max_tokens is refused, never silently adjusted", () => {
  assertInvalid(
    reasoningCall({ reasoning: { budgetTokens: 512 } }),
    "thinking.budget_tokens",
    /at least 1024/,
  );
  assertInvalid(
    reasoningCall({ reasoning: { budgetTokens: 4096 } }, { maxOutputTokens: 4096 }),
    "thinking.budget_tokens",
    /less than max_tokens \(4096\)/,
  );
});

test("with the interleaved-thinking beta an explicit budget may exceed max_tokens", () => {
  const body = bodyOf(
    reasoningCall(
      { reasoning: { budgetTokens: 20_000 }, anthropicBeta: ["interleaved-thinking-2025-05-14"] },
      { maxOutputTokens: 8192 },
    ),
  );
  assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 20_000 });
  assert.equal(body.max_tokens, 8192);
});

test("effort → budget by table, bounded by max_tokens - 1", () => {
  for (const [effort, budget] of Object.entries(EFFORT_BUDGET_TOKENS)) {
    const body = bodyOf(
      reasoningCall(
        { reasoning: { effort: effort as keyof typeof EFFORT_BUDGET_TOKENS } },
        { maxOutputTokens: 128_000 },
      ),
    );
    assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: budget }, effort);
  }
  assert.deepEqual(EFFORT_BUDGET_TOKENS, {
    minimal: 1024,
    low: 2048,
    medium: 8192,
    high: 24_576,
    xhigh: 32_768,
    max: 65_536,
  });
  const bounded = bodyOf(reasoningCall({ reasoning: { effort: "high" } }, { maxOutputTokens: 5000 }));
  assert.deepEqual(bounded.thinking, { type: "enabled", budget_tokens: 4999 });
  assert.equal(bounded.max_tokens, 5000);
  // enabled without effort or budget: Anthropic's default effort, high.
  assert.deepEqual(bodyOf(reasoningCall({ reasoning: { enabled: true } })).thinking, {
    type: "enabled",
    budget_tokens: 24_576,
  });
});

test("effort with an output cap too small for the minimum budget is refused naming max_tokens", () => {
  assertInvalid(
    reasoningCall({ reasoning: { effort: "low" } }, { maxOutputTokens: 1024 }),
    "max_tokens",
    /above 1024/,
  );
});

test("no thinking: effort none, enabled false, no reasoning options, or a model without the feature", () => {
  for (const reasoning of [
    { effort: "none" as const },
    { enabled: false, budgetTokens: 2048 },
    {},
    undefined,
  ]) {
    assert.equal("thinking" in bodyOf(reasoningCall({ reasoning })), false, JSON.stringify(reasoning));
  }
  const plain = bodyOf(
    reasoningCall({ reasoning: { effort: "high" }, sampling: { temperature: 0.5 } }, { features: ["tools"] }),
  );
  assert.equal("thinking" in plain, false);
  assert.equal(plain.temperature, 0.5);
});

test("with thinking on, temperature and top_k are not sent and top_p only from 0.95", () => {
  const body = bodyOf(
    reasoningCall({ reasoning: { effort: "low" }, sampling: { temperature: 0.2, topK: 5, topP: 0.97 } }),
  );
  assert.equal("temperature" in body, false);
  assert.equal("top_k" in body, false);
  assert.equal(body.top_p, 0.97);
  const lowTopP = bodyOf(reasoningCall({ reasoning: { effort: "low" }, sampling: { topP: 0.5 } }));
  assert.equal("top_p" in lowTopP, false);
});

test("a forced tool choice with thinking is refused naming tool_choice; auto and none are fine", () => {
  const tools = [{ name: "f" }];
  for (const toolChoice of [{ type: "required" as const }, { type: "tool" as const, name: "f" }]) {
    assertInvalid(
      reasoningCall({ reasoning: { effort: "low" }, tools, toolChoice }),
      "tool_choice",
      /forces tool use/,
    );
  }
  for (const toolChoice of [{ type: "auto" as const }, { type: "none" as const }]) {
    const body = bodyOf(reasoningCall({ reasoning: { effort: "low" }, tools, toolChoice }));
    assert.deepEqual(body.tool_choice, toolChoice);
    assert.ok(body.thinking);
  }
  // Without reasoning the same forced choice is sent as asked.
  const forced = bodyOf(reasoningCall({ tools, toolChoice: { type: "required" } }));
  assert.deepEqual(forced.tool_choice, { type: "any" });
});

const loop = (reasoning?: CanonicalMessage): CanonicalMessage[] => [
  { role: "user", content: [{ type: "text", text: "Weather?" }] },
  {
    role: "assistant",
    content: [
      ...(reasoning?.role === "assistant" ? reasoning.content : []),
      { type: "tool-call", id: "toolu_1", name: "get_weather", arguments: "{}" },
    ],
  },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "toolu_1", content: [{ type: "text", text: "sunny" }] }],
  },
];

test("active tool loop: thinking stays on with this model's signed thinking, goes off without it", () => {
  const signed: CanonicalMessage = {
    role: "assistant",
    content: [
      {
        type: "reasoning",
        text: "call it",
        providerState: { providerKind: "anthropic", upstreamModel: "upstream-model-1", signature: "sig" },
      },
    ],
  };
  const withState = bodyOf(reasoningCall({ reasoning: { effort: "low" }, messages: loop(signed) }));
  assert.deepEqual(withState.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.deepEqual(withState.messages[1].content[0], {
    type: "thinking",
    thinking: "call it",
    signature: "sig",
  });

  // History from a client format that carries no signature, or from another model: Anthropic would
  // reject thinking here ("a final assistant message must start with a thinking block").
  const foreign: CanonicalMessage = {
    role: "assistant",
    content: [
      {
        type: "reasoning",
        text: "other model",
        providerState: { providerKind: "anthropic", upstreamModel: "claude-other", signature: "sig" },
      },
    ],
  };
  for (const messages of [loop(), loop(foreign)]) {
    const body = bodyOf(
      reasoningCall({
        reasoning: { effort: "low" },
        messages,
        tools: [{ name: "get_weather" }],
        toolChoice: { type: "required" },
      }),
    );
    assert.equal("thinking" in body, false);
    assert.deepEqual(body.tool_choice, { type: "any" });
  }

  // A finished loop (the user spoke after the results) needs no thinking block.
  const finished = [
    ...loop(),
    { role: "assistant", content: [{ type: "text", text: "Sunny." }] },
    {
      role: "user",
      content: [{ type: "text", text: "Thanks" }],
    },
  ] as CanonicalMessage[];
  assert.ok(bodyOf(reasoningCall({ reasoning: { effort: "low" }, messages: finished })).thinking);
});

test("thinking with a json_schema format: native output_config.format, merged with a passed-through effort", () => {
  const schema = {
    type: "object",
    properties: { a: { type: "string" } },
    required: ["a"],
    additionalProperties: false,
  };
  const request = buildAnthropicRequest(
    reasoningCall({
      reasoning: { effort: "medium" },
      responseFormat: { type: "json_schema", name: "r", schema },
      passthrough: { output_config: { effort: "high" } },
    }),
    { stream: false },
  );
  assert.deepEqual(request.body.output_config, { effort: "high", format: { type: "json_schema", schema } });
  assert.equal(request.jsonToolName, undefined);
  assert.equal("tools" in request.body, false);
});
