import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { loadOpenApiValidator } from "../../../test/helpers/openapi-schema-validator.js";
import type { CanonicalResult, CanonicalUsage, FinishReason, ResultContent } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import { responsesFormat } from "./index.js";

const context: ResponsesEncodeContext = {
  requestId: "req_9",
  model: "openai/gpt-5",
  createdAt: 1_700_000_000,
};

const usage: CanonicalUsage = {
  inputTokens: 120,
  outputTokens: 45,
  cachedInputTokens: 100,
  cacheWriteTokens: 7,
  cacheWrite1hTokens: 3,
  reasoningTokens: 10,
};

const anthropicState = { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", signature: "sig==" };

/** Reasoning with state, text, then two tool calls: the usual agent turn. */
const agentTurn: ResultContent[] = [
  { type: "reasoning", text: "Two lookups.", providerState: anthropicState },
  { type: "text", text: "Checking " },
  { type: "text", text: "both." },
  { type: "tool-call", id: "toolu_a", name: "get_weather", arguments: '{"city":"Paris"}' },
  { type: "tool-call", id: "toolu_b", name: "get_time", arguments: '{ "tz": "Europe/Paris" }' },
];

function encode(content: ResultContent[], finishReason: FinishReason = "stop", encodeContext = context) {
  const result: CanonicalResult = { content, finishReason, usage };
  const settlement: Settlement = { usage, costMicroUsd: 1234, finishReason };
  return encodeResponsesResult(result, settlement, encodeContext);
}

test("a text answer is a completed response with one message item and usage", () => {
  const before = Math.floor(Date.now() / 1000);
  const body = encode([{ type: "text", text: "Hello!" }]);
  assert.equal(body.id, "resp_req_9");
  assert.equal(body.object, "response");
  assert.equal(body.created_at, 1_700_000_000);
  assert.equal(body.model, "openai/gpt-5");
  assert.equal(body.status, "completed");
  assert.equal(body.incomplete_details, null);
  assert.equal(body.error, null);
  assert.ok(body.completed_at !== null && body.completed_at >= before);
  assert.deepEqual(body.output, [
    {
      id: "msg_req_9_0",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Hello!", annotations: [], logprobs: [] }],
    },
  ]);
  assert.deepEqual(body.usage, {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 100, cache_write_tokens: 10 },
    output_tokens: 45,
    output_tokens_details: { reasoning_tokens: 10 },
    total_tokens: 165,
    cost: 0.001234,
  });
});

test("output order: reasoning item, one message item, one function_call item per call, ids from the request id", () => {
  const body = encode(agentTurn, "tool-calls");
  assert.equal(body.status, "completed");
  assert.deepEqual(
    body.output.map((item) => [item.type, item.id]),
    [
      ["reasoning", "rs_req_9_0"],
      ["message", "msg_req_9_1"],
      ["function_call", "fc_req_9_2"],
      ["function_call", "fc_req_9_3"],
    ],
  );
  const [reasoning, message, first, second] = body.output;
  assert.ok(reasoning.type === "reasoning" && message.type === "message");
  assert.deepEqual(reasoning.summary, [{ type: "summary_text", text: "Two lookups." }]);
  assert.ok(reasoning.encrypted_content?.startsWith("hi1."));
  assert.equal(message.content[0].text, "Checking both.");
  assert.deepEqual(first, {
    id: "fc_req_9_2",
    type: "function_call",
    status: "completed",
    call_id: "toolu_a",
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  });
  assert.ok(second.type === "function_call");
  assert.equal(second.arguments, '{ "tz": "Europe/Paris" }', "arguments byte-exact");
  assert.deepEqual(encode(agentTurn, "tool-calls").output, body.output, "ids are deterministic");
});

test("the output replayed as the next input decodes to the same reasoning state and tool calls", () => {
  const body = encode(agentTurn, "tool-calls");
  const next = decodeResponsesRequest({
    model: "anthropic/claude-sonnet-4.5",
    input: [
      { role: "user", content: "Weather and time in Paris?" },
      ...body.output,
      { type: "function_call_output", call_id: "toolu_a", output: "18C" },
      { type: "function_call_output", call_id: "toolu_b", output: "14:00" },
    ],
  });
  assert.deepEqual(next.messages[1], {
    role: "assistant",
    content: [agentTurn[0], { type: "text", text: "Checking both." }, agentTurn[3], agentTurn[4]],
  });
  const reasoning = next.messages[1].content[0];
  assert.ok(reasoning.type === "reasoning");
  assert.deepEqual(reasoning.providerState, anthropicState, "identical provider state");
});

/** Gemini: the thought signature rides on the function call, not on a reasoning block. */
const geminiState = {
  providerKind: "google",
  upstreamModel: "gemini-3-pro-preview",
  signature: "CiQB+/=sig",
};
const geminiTurn: ResultContent[] = [
  { type: "reasoning", text: "Look it up." },
  { type: "text", text: "Checking." },
  {
    type: "tool-call",
    id: "call_g1",
    name: "get_weather",
    arguments: '{"city":"Paris"}',
    providerState: geminiState,
  },
  { type: "tool-call", id: "call_g2", name: "get_time", arguments: "{}" },
];

test("a tool call's own state rides in an empty reasoning item after the function_call items", () => {
  const body = encode(geminiTurn, "tool-calls");
  assert.deepEqual(
    body.output.map((item) => [item.type, item.id]),
    [
      ["reasoning", "rs_req_9_0"],
      ["message", "msg_req_9_1"],
      ["function_call", "fc_req_9_2"],
      ["function_call", "fc_req_9_3"],
      ["reasoning", "rs_req_9_4"],
    ],
  );
  const carrier = body.output[4];
  assert.ok(carrier.type === "reasoning");
  assert.deepEqual(carrier.summary, []);
  assert.ok(carrier.encrypted_content);
  assert.deepEqual(unwrapOpaqueState(carrier.encrypted_content, "openai-responses", "encryptedContent"), {
    ...geminiState,
    toolCallId: "call_g1",
  });
});

test("a call's state comes back byte-identical on the call; a carrier for no call in the turn is dropped", () => {
  const body = encode(geminiTurn, "tool-calls");
  const replay = (output: unknown[]) =>
    decodeResponsesRequest({
      model: "google/gemini-3-pro-preview",
      input: [
        { role: "user", content: "Weather in Paris?" },
        ...output,
        { type: "function_call_output", call_id: "call_g1", output: "18C" },
        { type: "function_call_output", call_id: "call_g2", output: "14:00" },
      ],
    } as never);
  const next = replay(body.output);
  assert.deepEqual(next.messages[1], { role: "assistant", content: geminiTurn });
  const call = next.messages[1].content[2];
  assert.ok(call.type === "tool-call");
  assert.equal(call.providerState?.signature, geminiState.signature, "byte-identical signature");
  assert.deepEqual(call.providerState, geminiState);

  // Position does not matter, only the id: a carrier moved before its call still attaches.
  const [reasoning, message, firstCall, secondCall, carrier] = body.output;
  assert.deepEqual(
    replay([reasoning, message, carrier, firstCall, secondCall]).messages[1],
    next.messages[1],
  );
  // A carrier whose call is not in the turn is state for nothing.
  const orphan = replay([reasoning, message, carrier, secondCall]);
  assert.deepEqual(orphan.messages[1], {
    role: "assistant",
    content: [geminiTurn[0], geminiTurn[1], geminiTurn[3]],
  });
});

test("finish reasons map to completed or incomplete with the reason", () => {
  const cases: Array<[FinishReason, string, string | null]> = [
    ["stop", "completed", null],
    ["tool-calls", "completed", null],
    ["stop-sequence", "completed", null],
    ["pause", "completed", null],
    ["length", "incomplete", "max_output_tokens"],
    ["context-window", "incomplete", "max_output_tokens"],
    ["content-filter", "incomplete", "content_filter"],
    ["refusal", "incomplete", "content_filter"],
  ];
  for (const [reason, status, incompleteReason] of cases) {
    const body = encode([{ type: "text", text: "x" }], reason);
    assert.equal(body.status, status, reason);
    assert.deepEqual(
      body.incomplete_details,
      incompleteReason === null ? null : { reason: incompleteReason },
    );
    assert.equal(body.completed_at === null, status === "incomplete", "completed_at only when completed");
  }
});

test("empty parts produce no items; each reasoning block is its own item; text after a call is a new message", () => {
  const redacted = { providerKind: "anthropic", upstreamModel: "m", redactedData: "opaque" };
  const body = encode([
    { type: "text", text: "" },
    { type: "reasoning", text: "" },
    { type: "reasoning", text: "Thinking.", providerState: anthropicState },
    { type: "reasoning", text: "", providerState: redacted },
    { type: "text", text: "A" },
    { type: "reasoning", text: "" },
    { type: "text", text: "B" },
    { type: "tool-call", id: "c1", name: "f", arguments: "{}" },
    { type: "text", text: "After." },
  ]);
  assert.deepEqual(
    body.output.map((item) => item.type),
    ["reasoning", "reasoning", "message", "function_call", "message"],
  );
  const [first, second, message, , last] = body.output;
  assert.ok(first.type === "reasoning" && second.type === "reasoning");
  assert.deepEqual(second.summary, []);
  assert.ok(second.encrypted_content !== undefined && second.encrypted_content !== first.encrypted_content);
  assert.ok(message.type === "message" && last.type === "message");
  assert.equal(message.content[0].text, "AB");
  assert.equal(last.id, "msg_req_9_4");
  assert.deepEqual(encode([]).output, []);
});

test("the response echoes the decoded request's settings when the context carries it", () => {
  const parameters = { type: "object", properties: {} };
  const request = decodeResponsesRequest({
    model: "openai/gpt-5",
    instructions: "Be brief.",
    input: [
      { role: "developer", content: "Metric." },
      { role: "user", content: "Hi" },
    ],
    tools: [{ type: "function", name: "f", parameters, strict: true }, { type: "web_search" }],
    tool_choice: { type: "function", name: "f" },
    parallel_tool_calls: false,
    temperature: 0.3,
    top_p: 0.8,
    max_output_tokens: 256,
    reasoning: { effort: "low" },
    text: {
      format: { type: "json_schema", name: "a", schema: { type: "object" }, strict: true },
      verbosity: "high",
    },
    safety_identifier: "user-7",
    metadata: { team: "x" },
  });
  const body = encode([{ type: "text", text: "{}" }], "stop", { ...context, request });
  assert.equal(body.instructions, "Be brief.\n\nMetric.");
  assert.deepEqual(body.tools, [
    { type: "function", name: "f", description: null, parameters, strict: true },
  ]);
  assert.deepEqual(body.tool_choice, { type: "function", name: "f" });
  assert.equal(body.parallel_tool_calls, false);
  assert.equal(body.temperature, 0.3);
  assert.equal(body.top_p, 0.8);
  assert.equal(body.max_output_tokens, 256);
  assert.deepEqual(body.reasoning, { effort: "low", summary: null });
  assert.deepEqual(body.text, {
    format: { type: "json_schema", name: "a", schema: { type: "object" }, strict: true },
    verbosity: "high",
  });
  assert.equal(body.user, "user-7");
  assert.deepEqual(body.metadata, { team: "x" });
  assert.equal(body.store, false);

  const defaults = encode([{ type: "text", text: "x" }]);
  assert.equal(defaults.instructions, null);
  assert.deepEqual(defaults.tools, []);
  assert.equal(defaults.tool_choice, "auto");
  assert.equal(defaults.parallel_tool_calls, true);
  assert.equal(defaults.temperature, null);
  assert.equal(defaults.top_p, null);
  assert.deepEqual(defaults.text, { format: { type: "text" } });
  assert.deepEqual(defaults.metadata, {});
  assert.equal("user" in defaults, false);
});

test("response bodies validate against the Response schema of OpenAI's OpenAPI document", () => {
  const validator = loadOpenApiValidator();
  const request = decodeResponsesRequest({
    model: "openai/gpt-5",
    instructions: "x",
    input: "Hi",
    tools: [{ type: "function", name: "f" }],
    tool_choice: "required",
    text: { format: { type: "json_object" } },
    reasoning: { effort: "xhigh" },
    user: "u",
  });
  const bodies = [
    encode(agentTurn, "tool-calls"),
    encode(agentTurn, "length"),
    encode([], "content-filter"),
    encode(geminiTurn, "tool-calls"),
    encode([{ type: "text", text: "x" }], "stop", { ...context, request }),
  ];
  for (const body of bodies) assert.deepEqual(validator.validate("Response", body), [], body.status);
  // The check can fail: a body missing required fields or with a wrong item shape is reported.
  const { tools: _tools, ...withoutTools } = encode(agentTurn);
  assert.ok(validator.validate("Response", withoutTools).some((violation) => violation.includes("tools")));
  const broken = {
    ...encode(agentTurn),
    output: [{ type: "message", id: "m", role: "assistant", content: [] }],
  };
  assert.ok(validator.validate("Response", broken).some((violation) => violation.includes("status")));
});

test("the official SDK reads the body: output_text, function calls and usage", async () => {
  const body = encode(agentTurn, "tool-calls");
  const client = new OpenAI({
    apiKey: "x",
    baseURL: "http://gateway.test/api/v1",
    maxRetries: 0,
    fetch: async () => Response.json(body),
  });
  const response = await client.responses.create({ model: "openai/gpt-5", input: "Hi" });
  assert.equal(response.output_text, "Checking both.");
  assert.deepEqual(
    response.output.flatMap((item) =>
      item.type === "function_call" ? [[item.call_id, item.arguments]] : [],
    ),
    [
      ["toolu_a", '{"city":"Paris"}'],
      ["toolu_b", '{ "tz": "Europe/Paris" }'],
    ],
  );
  assert.equal(response.usage?.output_tokens_details.reasoning_tokens, 10);
});

test("encodeError renders the common envelope", () => {
  const error = new GatewayError("provider_rate_limit", "Slow down", { retryAfterSeconds: 7 });
  assert.deepEqual(responsesFormat.encodeError(error, "req_9"), {
    error: {
      message: "Slow down",
      type: "rate_limit_error",
      code: "provider_rate_limit",
      param: null,
      request_id: "req_9",
      retry_after_seconds: 7,
    },
  });
  assert.equal(responsesFormat.name, "responses");
});
