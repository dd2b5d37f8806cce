/**
 * The conformance matrix, generated from tables: for one ingress format, every provider kind ×
 * every scenario × streaming and not, one node:test test per cell, named after it
 * (`messages × google × parallel-tools × stream`). One gateway (embedded mode) serves the whole
 * file; each cell scripts the fake upstream of its kind, drives the official client, and checks
 * three things:
 *
 * 1. what the upstream received, in the provider's native form (wire readers of upstream-wire.ts);
 * 2. what the client got, exactly: text, reasoning text, tool-call ids and arguments, the format's
 *    finish value, usage mapped to the format, errors with code / status / envelope / Retry-After;
 * 3. the raw bytes on the client side: OpenAI's published schema for Chat and Responses bodies,
 *    chunks and events (test/fixtures/specs), SSE framing rules of each format.
 *
 * Cells known to fail because of a gateway bug are registered with `todo: "<what is wrong>"` by the
 * calling test file, so the suite stays green while the bug stays visible (docs/conformance.md).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ProviderKind } from "../../../src/catalog/types.js";
import { ERROR_CATALOG, type ErrorCode } from "../../../src/errors/catalog.js";
import {
  CONFORMANCE_MAX_OUTPUT_TOKENS,
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
  type UpstreamRequest,
} from "../../helpers/conformance-gateway.js";
import { loadOpenApiValidator, type OpenApiValidator } from "../../helpers/openapi-schema-validator.js";
import {
  ANTHROPIC_JSON_TOOL,
  type ExpectedGatewayError,
  errorBeforeOutput,
  failureAfterText,
  PARTIAL_TEXT,
  REASONING_STATE,
  SCENARIO_ANSWERS,
  SCENARIOS,
  type ScenarioId,
  STRUCTURED_JSON,
  scriptAnswer,
  upstreamToolCallId,
  WEATHER_SCHEMA,
  WEATHER_TOOL,
} from "../../helpers/scenario-scripts.js";
import { expectedUsage, FORMAT_FINISH } from "./expectations.js";
import {
  type Clients,
  FORMAT_DRIVERS,
  type FormatId,
  MESSAGES_THINKING_BUDGET,
  type TurnOutcome,
  type TurnRequest,
} from "./format-drivers.js";
import { checkChatStream, checkMessagesStream, checkResponsesStream } from "./stream-rules.js";
import { checkUpstreamAuth, WIRE_READERS } from "./upstream-wire.js";
import {
  createWireTap,
  parseSseFrames,
  type SseFrame,
  type TappedExchange,
  type WireTap,
} from "./wire-tap.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

export type Mode = "stream" | "non-stream";
export const MODES: readonly Mode[] = ["non-stream", "stream"];

export function cellName(format: FormatId, kind: ProviderKind, scenario: ScenarioId, mode: Mode): string {
  return `${format} × ${kind} × ${scenario} × ${mode}`;
}

/** Chat `gen-<request id>`, Responses `resp_<request id>`, Messages `msg_<request id>`. */
const ID_PREFIXES: Record<FormatId, string> = { chat: "gen-", responses: "resp_", messages: "msg_" };

function readStreamId(format: FormatId, frames: SseFrame[]): string | undefined {
  for (const frame of frames) {
    if (frame.data === "[DONE]") continue;
    const data = JSON.parse(frame.data);
    if (format === "chat" && typeof data.id === "string") return data.id;
    if (format === "responses" && data.response?.id) return data.response.id;
    if (format === "messages" && data.type === "message_start") return data.message.id;
  }
  return undefined;
}

/** The format's finish value for the finishes the scenarios use. */
export const FINISH = FORMAT_FINISH;

/**
 * Events whose `response` cannot match OpenAI's `Response` schema, in OpenAI's own streams either:
 * `usage: null` until the end, and on failure an `error.code` outside the schema's enum (the
 * recorded `openai-error.1.chunks.txt` has `insufficient_quota`; the gateway sends its own codes).
 */
const SCHEMA_EXEMPT_EVENTS = new Set(["response.created", "response.in_progress", "response.failed"]);
const SYSTEM_PROMPT = "You are a terse assistant.";
const TOOL_RESULT = '{"temperature":21,"sky":"sunny"}';
/** A 1×1 PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

export interface MatrixOptions {
  format: FormatId;
  /** Cells that fail because of a known gateway bug: cell name → what is wrong, where. */
  todo?: Record<string, string>;
}

export interface CellContext {
  gateway: ConformanceGateway;
  clients: Clients;
  tap: WireTap;
  /** OpenAI's published schema, when the caller asked for it. */
  validator: OpenApiValidator | undefined;
}

/** A conformance gateway and official clients whose raw exchanges are recorded. */
export async function startCellContext(options: { validate: boolean }): Promise<CellContext> {
  const gateway = await startConformanceGateway();
  const tap = createWireTap();
  const clients: Clients = {
    openai: new OpenAI({
      apiKey: gateway.apiKey,
      baseURL: `${gateway.url}/api/v1`,
      maxRetries: 0,
      timeout: 20_000,
      fetch: tap.fetch,
    }),
    anthropic: new Anthropic({
      apiKey: gateway.apiKey,
      baseURL: `${gateway.url}/api`,
      maxRetries: 0,
      timeout: 20_000,
      fetch: tap.fetch,
    }),
  };
  return { gateway, clients, tap, validator: options.validate ? loadOpenApiValidator() : undefined };
}

/**
 * Registers every cell of `options.format` as a top-level test of the calling file; returns the
 * cell context getter for further tests of the file (they run after the cells, same gateway).
 */
export function registerMatrix(options: MatrixOptions): () => CellContext {
  const { format } = options;
  let context: CellContext | undefined;
  before(async () => {
    context = await startCellContext({ validate: format !== "messages" });
  });
  after(async () => {
    await context?.gateway.close();
  });

  const known = new Set(Object.keys(options.todo ?? {}));
  for (const kind of PROVIDER_KINDS) {
    for (const scenario of SCENARIOS) {
      for (const mode of MODES) {
        const name = cellName(format, kind, scenario, mode);
        known.delete(name);
        const todo = options.todo?.[name];
        test(name, todo === undefined ? {} : { todo }, async () => {
          assert.ok(context, "gateway started");
          await runCell(context, format, kind, scenario, mode === "stream");
        });
      }
    }
  }
  // A todo entry naming no cell is a typo that would hide nothing: fail loudly.
  test(`${format} matrix: every todo entry names a cell`, () => {
    assert.deepEqual([...known], []);
  });
  return () => {
    assert.ok(context, "gateway started");
    return context;
  };
}

async function runCell(
  context: CellContext,
  format: FormatId,
  kind: ProviderKind,
  scenario: ScenarioId,
  stream: boolean,
): Promise<void> {
  const upstream = context.gateway.upstreams[kind];
  const reader = WIRE_READERS[kind];
  const driver = FORMAT_DRIVERS[format];
  const requestMark = upstream.requests.length;
  const tapMark = context.tap.exchanges.length;
  const send = (request: Omit<TurnRequest, "model">) =>
    driver.send(context.clients, { model: upstream.model, ...request }, stream);
  const upstreamCalls = (count: number): UpstreamRequest[] => {
    const calls = upstream.requests.slice(requestMark);
    assert.equal(calls.length, count, `upstream calls: ${calls.map((call) => call.path).join(", ")}`);
    for (const call of calls) {
      reader.checkCall(call, { upstreamModel: upstream.upstreamModel, stream });
      checkUpstreamAuth(kind, call);
    }
    return calls;
  };
  const defaultCap = format === "messages" ? 4096 : CONFORMANCE_MAX_OUTPUT_TOKENS;

  switch (scenario) {
    case "text": {
      upstream.serve(scriptAnswer(kind, "text", { stream }));
      const outcome = await send({ system: SYSTEM_PROMPT, text: "Say hello" });
      assertSucceeded(outcome);
      const [call] = upstreamCalls(1);
      assert.equal(reader.system(call.body), SYSTEM_PROMPT, "system prompt in the native place");
      assert.deepEqual(reader.visibleTexts(call.body), ["Say hello"]);
      assert.equal(
        reader.outputCap(call.body),
        defaultCap,
        "output cap: the caller's, else the model's maximum",
      );
      assert.equal(outcome.text, "Hello, world!");
      assert.equal(outcome.reasoningText, "");
      assert.deepEqual(outcome.toolCalls, []);
      assert.equal(outcome.finish, FINISH[format].stop);
      assert.deepEqual(outcome.usage, expectedUsage(format, SCENARIO_ANSWERS.text.usage));
      break;
    }
    case "tool-call":
    case "parallel-tools": {
      upstream.serve(scriptAnswer(kind, scenario, { stream }));
      const outcome = await send({ text: "What is the weather in Paris and Tokyo?", tools: [WEATHER_TOOL] });
      assertSucceeded(outcome);
      const [call] = upstreamCalls(1);
      assert.deepEqual(reader.tools(call.body), [WEATHER_TOOL], "tool in the provider's native shape");
      const expected = SCENARIO_ANSWERS[scenario].toolCalls;
      assert.deepEqual(
        outcome.toolCalls.map((toolCall) => [toolCall.name, toolCall.arguments]),
        expected.map((toolCall) => [toolCall.name, toolCall.arguments]),
        "tool calls in order, arguments byte-exact",
      );
      assertToolCallIds(kind, outcome);
      assert.equal(outcome.text, "");
      assert.equal(outcome.finish, FINISH[format]["tool-calls"]);
      assert.deepEqual(outcome.usage, expectedUsage(format, SCENARIO_ANSWERS[scenario].usage));
      break;
    }
    case "reasoning":
      await runReasoningRoundTrip(context, format, kind, stream, send, upstreamCalls);
      break;
    case "structured-output": {
      upstream.serve(scriptAnswer(kind, "structured-output", { stream }));
      const outcome = await send({
        text: "The weather in Paris, as JSON",
        jsonSchema: { name: "weather", schema: WEATHER_SCHEMA as unknown as Record<string, unknown> },
      });
      assertSucceeded(outcome);
      const [call] = upstreamCalls(1);
      // The messages format has no schema name; the gateway names it "output".
      checkStructuredOutputRequest(kind, call.body, format === "messages" ? "output" : "weather");
      assert.equal(outcome.text, STRUCTURED_JSON, "the JSON answer as the message text");
      assert.deepEqual(outcome.toolCalls, [], "no tool call leaks out of the structured-output emulation");
      assert.equal(outcome.finish, FINISH[format].stop);
      assert.deepEqual(outcome.usage, expectedUsage(format, SCENARIO_ANSWERS["structured-output"].usage));
      break;
    }
    case "image-input": {
      upstream.serve(scriptAnswer(kind, "image-input", { stream }));
      const imageUrl = `${upstream.origin}/images/cat.png`;
      const outcome = await send({
        text: "What is in these images?",
        images: [{ mediaType: "image/png", data: PNG_BASE64 }, { url: imageUrl }],
      });
      assertSucceeded(outcome);
      // Exactly one call, the generation: the image URL was passed on, never fetched.
      const [call] = upstreamCalls(1);
      assert.deepEqual(reader.images(call.body), [
        { kind: "data", mediaType: "image/png", data: PNG_BASE64 },
        { kind: "url", url: imageUrl },
      ]);
      assert.equal(outcome.text, "A cat on a mat.");
      assert.equal(outcome.finish, FINISH[format].stop);
      break;
    }
    case "error-before-output": {
      const { reply, expected } = errorBeforeOutput(kind);
      upstream.serve(reply);
      const outcome = await send({ text: "Say hello" });
      upstreamCalls(1);
      assertHttpError(format, outcome, expected);
      await checkErrorBody(context, format, context.tap.since(tapMark));
      return;
    }
    case "error-mid-stream": {
      const { reply, expectedCode } = failureAfterText(kind, { stream });
      upstream.serve(reply);
      const outcome = await send({ text: "Say something long" });
      upstreamCalls(1);
      if (stream) {
        assertInBandError(format, outcome, expectedCode);
      } else {
        // A non-streamed answer that breaks off is a plain (retryable) HTTP error.
        assertHttpError(format, outcome, {
          code: "provider_unavailable",
          status: 502,
          openaiType: "api_error",
          anthropicType: "api_error",
          retryAfter: 1,
        });
        await checkErrorBody(context, format, context.tap.since(tapMark));
        return;
      }
      break;
    }
    case "output-cap": {
      upstream.serve(scriptAnswer(kind, "output-cap", { stream }));
      const outcome = await send({ text: "Tell me everything", maxTokens: 16 });
      assertSucceeded(outcome);
      const [call] = upstreamCalls(1);
      assert.equal(reader.outputCap(call.body), 16, "the caller's cap in the native field");
      assert.equal(outcome.text, "The answer is");
      assert.equal(outcome.finish, FINISH[format].length);
      assert.deepEqual(outcome.usage, expectedUsage(format, SCENARIO_ANSWERS["output-cap"].usage));
      break;
    }
  }
  await checkWire(context, format, stream, context.tap.since(tapMark));
}

/**
 * Turn 1 returns reasoning with the provider's opaque state, text and a tool call; turn 2 sends
 * the assistant turn back through the same format, with the tool result. The upstream must get
 * its own state back byte-identical; reasoning text must never come back as visible text.
 */
async function runReasoningRoundTrip(
  context: CellContext,
  format: FormatId,
  kind: ProviderKind,
  stream: boolean,
  send: (request: Omit<TurnRequest, "model">) => Promise<TurnOutcome>,
  upstreamCalls: (count: number) => UpstreamRequest[],
): Promise<void> {
  const upstream = context.gateway.upstreams[kind];
  const answer = SCENARIO_ANSWERS.reasoning;
  const reasoningText = answer.reasoning.join("");
  upstream.serve(
    scriptAnswer(kind, "reasoning", { stream }),
    scriptAnswer(kind, "reasoning", { stream, turn: 2 }),
  );
  const request = { text: "What is the weather in Paris?", tools: [WEATHER_TOOL], reasoning: true };
  const first = await send(request);
  assertSucceeded(first);
  assert.equal(first.reasoningText, reasoningText, "reasoning in the format's reasoning channel");
  assert.equal(first.text, answer.text.join(""), "reasoning is not visible text");
  assert.deepEqual(
    first.toolCalls.map((call) => [call.name, call.arguments]),
    answer.toolCalls.map((call) => [call.name, call.arguments]),
  );
  assertToolCallIds(kind, first);
  assert.equal(first.finish, FINISH[format]["tool-calls"]);
  assert.deepEqual(first.usage, expectedUsage(format, answer.usage));

  const second = await send({ ...request, previous: { outcome: first, toolResult: TOOL_RESULT } });
  assertSucceeded(second);
  assert.equal(second.text, SCENARIO_ANSWERS.reasoningFollowUp.text.join(""));
  assert.equal(second.finish, FINISH[format].stop);

  checkReasoningOutputOrder(format, kind, first);
  const [firstCall, secondCall] = upstreamCalls(2);
  checkReasoningRequest(format, kind, firstCall.body);
  const visible = WIRE_READERS[kind].visibleTexts(secondCall.body);
  assert.ok(
    visible.every((text) => !text.includes(reasoningText)),
    `reasoning text sent back as visible text: ${JSON.stringify(visible)}`,
  );
  checkReasoningReplay(kind, secondCall.body, first.toolCalls[0].id);
}

/** Kinds whose upstream attaches opaque reasoning state. */
const STATEFUL_KINDS = new Set<ProviderKind>(["openai-responses", "anthropic", "google"]);

/**
 * Reasoning comes out in the format's own place and order: Chat `message.reasoning` (plus
 * `reasoning_details` when there is provider state); Responses items reasoning → message →
 * function_call; Messages blocks thinking first, text before tool_use.
 */
function checkReasoningOutputOrder(format: FormatId, kind: ProviderKind, outcome: TurnOutcome): void {
  const final = outcome.final as Json;
  switch (format) {
    case "chat": {
      const details = (outcome.assistantTurn as Json).reasoning_details;
      if (STATEFUL_KINDS.has(kind))
        assert.ok(Array.isArray(details) && details.length > 0, "reasoning_details");
      else assert.equal(details, undefined, "no reasoning_details without provider state");
      return;
    }
    case "responses": {
      // A reasoning item may also ride next to the call (state that belongs to a tool call).
      const types: string[] = final.output.map((item: Json) => item.type);
      assert.equal(types[0], "reasoning", `reasoning first: ${types.join(",")}`);
      assert.ok(
        types.indexOf("message") < types.indexOf("function_call"),
        `message, then call: ${types.join(",")}`,
      );
      assert.equal(types.filter((type) => type === "function_call").length, 1);
      // Anthropic and OpenAI put their state on the reasoning itself (Gemini's rides on the call).
      if (kind === "anthropic" || kind === "openai-responses") {
        assert.equal(typeof final.output[0].encrypted_content, "string", "state in encrypted_content");
      }
      return;
    }
    case "messages": {
      const types: string[] = final.content.map((block: Json) => block.type);
      assert.equal(types[0], "thinking", `thinking first: ${types.join(",")}`);
      assert.ok(
        types.indexOf("text") < types.indexOf("tool_use"),
        `text before tool_use: ${types.join(",")}`,
      );
      return;
    }
  }
}

/** Turn 1 asked for reasoning: each provider gets it in its own controls (docs/providers.md). */
function checkReasoningRequest(format: FormatId, kind: ProviderKind, body: Json): void {
  if (format === "messages") {
    // thinking {type: enabled, budget_tokens: 1024}. The OpenAI kinds have no budget field and no
    // documented budget → effort mapping: nothing is asserted for them (docs/conformance.md).
    if (kind === "anthropic") {
      assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: MESSAGES_THINKING_BUDGET });
    }
    if (kind === "google") {
      assert.equal(body.generationConfig.thinkingConfig.thinkingBudget, MESSAGES_THINKING_BUDGET);
      assert.equal(body.generationConfig.thinkingConfig.includeThoughts, true);
    }
    return;
  }
  // Chat `reasoning_effort: "low"`, Responses `reasoning: {effort: "low"}`.
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      assert.equal(body.reasoning_effort, "low");
      return;
    case "openai-responses":
      assert.deepEqual(body.reasoning, { effort: "low", summary: "auto" });
      assert.ok(body.include.includes("reasoning.encrypted_content"));
      return;
    case "anthropic":
      assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 2048 }, "low → 2048");
      return;
    case "google":
      assert.deepEqual(body.generationConfig.thinkingConfig, { includeThoughts: true, thinkingLevel: "low" });
      return;
  }
}

/** Turn 2 as the upstream received it: the provider's own state, byte-identical, in its place. */
function checkReasoningReplay(kind: ProviderKind, body: Json, callId: string): void {
  const reasoningText = SCENARIO_ANSWERS.reasoning.reasoning.join("");
  const args = SCENARIO_ANSWERS.reasoning.toolCalls[0].arguments;
  switch (kind) {
    case "openai-compatible":
    case "openai-chat": {
      const assistant = body.messages.find((message: Json) => message.role === "assistant");
      assert.equal(assistant.content, "Let me check.");
      assert.deepEqual(assistant.tool_calls, [
        { id: callId, type: "function", function: { name: WEATHER_TOOL.name, arguments: args } },
      ]);
      // Compatible hosts (vLLM, OpenRouter) read earlier reasoning in `reasoning`; OpenAI has no field.
      if (kind === "openai-compatible") assert.equal(assistant.reasoning, reasoningText);
      else assert.equal(assistant.reasoning, undefined);
      assert.equal(assistant.reasoning_details, undefined, "no gateway field upstream");
      const tool = body.messages.find((message: Json) => message.role === "tool");
      assert.deepEqual(tool, { role: "tool", tool_call_id: callId, content: TOOL_RESULT });
      return;
    }
    case "openai-responses": {
      const types = body.input.map((item: Json) => item.type ?? "message");
      const position = types.indexOf("reasoning");
      assert.ok(position >= 0, `a reasoning item is replayed: ${JSON.stringify(types)}`);
      const reasoning = body.input[position];
      assert.equal(
        reasoning.encrypted_content,
        REASONING_STATE["openai-responses"],
        "encrypted content byte-identical",
      );
      assert.ok(
        ["message", "function_call"].includes(types[position + 1]),
        `the reasoning item is followed by the item that followed it: ${JSON.stringify(types)}`,
      );
      const call = body.input.find((item: Json) => item.type === "function_call");
      assert.deepEqual([call.call_id, call.name, call.arguments], [callId, WEATHER_TOOL.name, args]);
      const output = body.input.find((item: Json) => item.type === "function_call_output");
      assert.deepEqual([output.call_id, output.output], [callId, TOOL_RESULT]);
      return;
    }
    case "anthropic": {
      const assistant = body.messages.find((message: Json) => message.role === "assistant");
      assert.deepEqual(
        assistant.content[0],
        { type: "thinking", thinking: reasoningText, signature: REASONING_STATE.anthropic },
        "thinking block first, signature byte-identical",
      );
      const toolUse = assistant.content.find((block: Json) => block.type === "tool_use");
      assert.deepEqual(toolUse, {
        type: "tool_use",
        id: callId,
        name: WEATHER_TOOL.name,
        input: JSON.parse(args),
      });
      const results = body.messages.at(-1).content.filter((block: Json) => block.type === "tool_result");
      assert.equal(results.length, 1);
      assert.equal(results[0].tool_use_id, callId);
      return;
    }
    case "google": {
      const model = body.contents.find((content: Json) => content.role === "model");
      const call = model.parts.find((part: Json) => part.functionCall !== undefined);
      assert.deepEqual(call.functionCall, { name: WEATHER_TOOL.name, args: JSON.parse(args) });
      assert.equal(
        call.thoughtSignature,
        REASONING_STATE.google,
        "thought signature byte-identical on the call",
      );
      const response = body.contents.at(-1).parts.find((part: Json) => part.functionResponse !== undefined);
      assert.equal(response.functionResponse.name, WEATHER_TOOL.name);
      return;
    }
  }
}

function checkStructuredOutputRequest(kind: ProviderKind, body: Json, name: string): void {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      assert.equal(body.response_format.type, "json_schema");
      assert.equal(body.response_format.json_schema.name, name);
      assert.deepEqual(body.response_format.json_schema.schema, WEATHER_SCHEMA);
      return;
    case "openai-responses":
      assert.equal(body.text.format.type, "json_schema");
      assert.equal(body.text.format.name, name);
      assert.deepEqual(body.text.format.schema, WEATHER_SCHEMA);
      return;
    case "anthropic": {
      // Emulated: a forced tool whose input schema is the requested schema.
      const tool = body.tools.find((candidate: Json) => candidate.name === ANTHROPIC_JSON_TOOL);
      assert.ok(tool, "the structured-output tool is sent");
      assert.deepEqual(tool.input_schema, WEATHER_SCHEMA);
      assert.equal(body.tool_choice.type, "tool");
      assert.equal(body.tool_choice.name, ANTHROPIC_JSON_TOOL);
      return;
    }
    case "google": {
      assert.equal(body.generationConfig.responseMimeType, "application/json");
      const { additionalProperties: _dropped, ...cleaned } = WEATHER_SCHEMA;
      assert.deepEqual(
        body.generationConfig.responseSchema,
        cleaned,
        "schema without keywords Gemini rejects",
      );
      return;
    }
  }
}

export function assertSucceeded(outcome: TurnOutcome): void {
  if (outcome.error !== undefined) {
    const error = outcome.error as Error & { error?: unknown };
    assert.fail(`the client threw: ${error.message} ${JSON.stringify(error.error ?? "")}`);
  }
}

/** Upstream ids reach the client unchanged; Gemini's id-less calls get distinct `call_` ids. */
function assertToolCallIds(kind: ProviderKind, outcome: TurnOutcome): void {
  const ids = outcome.toolCalls.map((call) => call.id);
  assert.equal(new Set(ids).size, ids.length, "distinct tool-call ids");
  ids.forEach((id, index) => {
    const upstreamId = upstreamToolCallId(kind, index);
    if (upstreamId === undefined) assert.match(id, /^call_[A-Za-z0-9]{24}$/);
    else assert.equal(id, upstreamId);
  });
}

export function assertHttpError(
  format: FormatId,
  outcome: TurnOutcome,
  expected: ExpectedGatewayError,
): void {
  const retryAfter = expected.retryAfter === undefined ? null : String(expected.retryAfter);
  if (format === "messages") {
    const error = outcome.error;
    assert.ok(error instanceof Anthropic.APIError, `expected an Anthropic APIError, got ${String(error)}`);
    assert.equal(error.status, expected.status);
    const body = error.error as Json;
    assert.equal(body.type, "error");
    assert.equal(body.error.type, expected.anthropicType);
    assert.equal(body.error.code, expected.code);
    assert.equal(body.error.retry_after_seconds, expected.retryAfter);
    assert.equal(typeof body.request_id, "string");
    assert.equal(error.headers?.get("retry-after") ?? null, retryAfter);
    return;
  }
  const error = outcome.error;
  assert.ok(error instanceof OpenAI.APIError, `expected an OpenAI APIError, got ${String(error)}`);
  assert.equal(error.status, expected.status);
  const body = error.error as Json;
  assert.equal(body.code, expected.code);
  assert.equal(body.type, expected.openaiType);
  assert.equal(body.retry_after_seconds, expected.retryAfter);
  assert.equal(error.headers?.get("retry-after") ?? null, retryAfter);
  if (expected.retryAfter === undefined && expected.status >= 500) {
    assert.equal(error.headers?.get("x-should-retry"), "false", "SDKs must not retry a non-retryable 5xx");
  }
}

/**
 * The SDK threw the format's in-band error after HTTP 200, carrying the gateway `code` (any code of
 * the catalog when undefined), and `partialText` had reached the client before it.
 */
export function assertInBandError(
  format: FormatId,
  outcome: TurnOutcome,
  code: ErrorCode | undefined,
  partialText: string = PARTIAL_TEXT.join(""),
): void {
  assert.equal(outcome.text, partialText, "the text before the failure reached the client");
  if (format === "messages") {
    const error = outcome.error;
    assert.ok(
      error instanceof Anthropic.APIError,
      `expected an in-band Anthropic APIError, got ${String(error)}`,
    );
    assert.equal(error.status, undefined, "in-band: after HTTP 200");
    const body = error.error as Json;
    assert.equal(body.type, "error");
    const actual = body.error.code as ErrorCode;
    assert.ok(actual in ERROR_CATALOG, `catalog code, got ${actual}`);
    if (code !== undefined) assert.equal(actual, code);
    assert.equal(body.error.type, ERROR_CATALOG[actual].anthropicType);
    return;
  }
  const error = outcome.error;
  assert.ok(error instanceof OpenAI.APIError, `expected an in-band OpenAI APIError, got ${String(error)}`);
  assert.equal(error.status, undefined, "in-band: after HTTP 200");
  const body = error.error as Json;
  const actual = body.code as ErrorCode;
  assert.ok(actual in ERROR_CATALOG, `catalog code, got ${actual}`);
  if (code !== undefined) assert.equal(actual, code);
  assert.equal(body.type, ERROR_CATALOG[actual].openaiType);
}

/** HTTP error bodies of the OpenAI formats validate against OpenAI's `ErrorResponse`. */
export async function checkErrorBody(
  context: CellContext,
  format: FormatId,
  exchanges: TappedExchange[],
): Promise<void> {
  assert.equal(exchanges.length, 1);
  const body = JSON.parse(await exchanges[0].body);
  assert.ok(exchanges[0].headers.get("x-request-id"), "X-Request-Id on errors");
  if (format !== "messages" && context.validator !== undefined) {
    assert.deepEqual(context.validator.validate("ErrorResponse", body), []);
  }
}

/**
 * The raw response: schema validity (Chat, Responses) and framing rules (all three formats).
 * Only the successful exchanges of the cell are checked here; error bodies in checkErrorBody.
 */
export async function checkWire(
  context: CellContext,
  format: FormatId,
  stream: boolean,
  exchanges: TappedExchange[],
): Promise<void> {
  const { validator } = context;
  for (const exchange of exchanges) {
    assert.equal(exchange.status, 200);
    const body = await exchange.body;
    const requestId = exchange.headers.get("x-request-id");
    assert.ok(requestId, "X-Request-Id");
    const expectedId = `${ID_PREFIXES[format]}${requestId}`;
    if (!stream) {
      const json = JSON.parse(body);
      assert.equal(json.id, expectedId, "the object id is derived from the request id");
      if (validator !== undefined && format === "chat") {
        assert.deepEqual(validator.validate("CreateChatCompletionResponse", json), []);
      }
      if (validator !== undefined && format === "responses")
        assert.deepEqual(validator.validate("Response", json), []);
      continue;
    }
    assert.match(exchange.headers.get("content-type") ?? "", /^text\/event-stream/);
    const frames = parseSseFrames(body);
    assert.equal(readStreamId(format, frames), expectedId, "the stream's id is derived from the request id");
    switch (format) {
      case "chat": {
        checkChatStream(frames);
        if (validator === undefined) break;
        for (const frame of frames) {
          if (frame.data === "[DONE]") continue;
          const chunk = JSON.parse(frame.data);
          if (chunk.error === undefined) {
            assert.deepEqual(validator.validate("CreateChatCompletionStreamResponse", chunk), []);
          }
        }
        break;
      }
      case "responses": {
        checkResponsesStream(frames);
        if (validator === undefined) break;
        for (const frame of frames) {
          const event = JSON.parse(frame.data);
          if (!SCHEMA_EXEMPT_EVENTS.has(event.type)) {
            assert.deepEqual(validator.validate("ResponseStreamEvent", event), [], event.type);
          }
          if (event.type === "response.completed" || event.type === "response.incomplete") {
            assert.deepEqual(validator.validate("Response", event.response), [], "final response");
          }
        }
        break;
      }
      case "messages":
        checkMessagesStream(frames);
        break;
    }
  }
}
