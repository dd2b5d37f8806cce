/**
 * The conformance matrix's scripted upstream answers: for every provider kind, what its fake
 * upstream sends back in each scenario, streamed and not (test/conformance, docs/conformance.md).
 *
 * Each scenario is first written once, provider-neutral ({@link SCENARIO_ANSWERS}: exact texts, tool
 * arguments, finish, usage), then rendered in each provider's own wire format by
 * {@link renderAnswer}: OpenAI Chat Completions (kinds `openai-compatible` and `openai-chat`),
 * OpenAI Responses, Anthropic Messages and Gemini. The matrix asserts what every ingress format must
 * make of that same answer, so a cell fails when an adapter parses or an encoder renders wrongly.
 *
 * Usage numbers are chosen so that every provider can express them (input 20 of which 5 cached,
 * output 8, or 12 of which 4 reasoning) and each wire spells them its own way: Anthropic's
 * `input_tokens` is the uncached remainder, Gemini's `candidatesTokenCount` excludes thoughts.
 *
 * Scenario-specific replies that are not "an answer" — HTTP errors before any output, a failure
 * after some text — are in {@link errorBeforeOutput} and {@link failureAfterText}.
 */
import type { ProviderKind } from "../../src/catalog/types.js";
import type { ErrorCode } from "../../src/errors/catalog.js";
import type { UpstreamReply } from "./conformance-gateway.js";
import {
  anthropicReply,
  buildMessage,
  errorEvent,
  messageDeltaEvent,
  messageStartEvent,
  messageStopEvent,
  pingEvent,
  textBlockEvents,
  thinkingBlockEvents,
  toolUseBlockEvents,
} from "./fake-anthropic-upstream.js";
import { buildGeminiChunk, buildGeminiError, fakeGoogleReply } from "./fake-google-upstream.js";
import {
  buildFailureEvents,
  buildResponse,
  buildResponseEvents,
  numberEvents,
  type ResponseItemSpec,
  type ResponseSpec,
  responsesReply,
} from "./fake-openai-responses-upstream.js";
import { buildChatCompletion, buildChunk, buildUsageChunk, fakeReply } from "./fake-openai-upstream.js";

export const SCENARIOS = [
  "text",
  "tool-call",
  "parallel-tools",
  "reasoning",
  "structured-output",
  "image-input",
  "error-before-output",
  "error-mid-stream",
  "output-cap",
] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

/** Token counts in the canonical (OpenAI) convention: input includes cached, output includes reasoning. */
export interface UsageNumbers {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

export interface ToolCallSpec {
  name: string;
  /** The complete arguments, compact JSON (what every client must receive byte-exact). */
  arguments: string;
  /** How the arguments stream on wires that stream them (they concatenate to `arguments`). */
  fragments: string[];
}

/** A provider-neutral upstream answer. */
export interface AnswerSpec {
  reasoning?: string[];
  text?: string[];
  toolCalls?: ToolCallSpec[];
  finish: "stop" | "length" | "tool-calls";
  usage: UsageNumbers;
}

export const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
    required: ["city"],
  },
} as const;

export const WEATHER_SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, temperature: { type: "number" } },
  required: ["city", "temperature"],
  additionalProperties: false,
} as const;

const PARIS: ToolCallSpec = {
  name: WEATHER_TOOL.name,
  arguments: '{"city":"Paris","unit":"celsius"}',
  fragments: ['{"city":', '"Paris",', '"unit":"celsius"}'],
};
const TOKYO: ToolCallSpec = {
  name: WEATHER_TOOL.name,
  arguments: '{"city":"Tokyo"}',
  fragments: ['{"ci', 'ty":"Tok', 'yo"}'],
};

const USAGE: UsageNumbers = { input: 20, cached: 5, output: 8, reasoning: 0 };
const REASONING_USAGE: UsageNumbers = { input: 20, cached: 5, output: 12, reasoning: 4 };

/** The JSON text structured-output cells expect, byte for byte. */
export const STRUCTURED_JSON = '{"city":"Paris","temperature":21}';

/** What the upstream answers, per scenario (turn 1; the reasoning scenario has a turn 2). */
export const SCENARIO_ANSWERS = {
  text: { text: ["Hello", ", wor", "ld!"], finish: "stop", usage: USAGE },
  "tool-call": { toolCalls: [PARIS], finish: "tool-calls", usage: USAGE },
  "parallel-tools": { toolCalls: [PARIS, TOKYO], finish: "tool-calls", usage: USAGE },
  reasoning: {
    reasoning: ["Checking ", "the forecast."],
    text: ["Let me check."],
    toolCalls: [PARIS],
    finish: "tool-calls",
    usage: REASONING_USAGE,
  },
  reasoningFollowUp: { text: ["It is sunny ", "in Paris."], finish: "stop", usage: USAGE },
  "structured-output": {
    text: ['{"city":"Paris",', '"temperature":21}'],
    finish: "stop",
    usage: USAGE,
  },
  "image-input": { text: ["A cat ", "on a mat."], finish: "stop", usage: USAGE },
  "output-cap": {
    text: ["The answer", " is"],
    finish: "length",
    usage: { input: 20, cached: 0, output: 16, reasoning: 0 },
  },
} satisfies Record<string, AnswerSpec>;

/** The text streamed before the upstream fails in `error-mid-stream`. */
export const PARTIAL_TEXT = ["Partial ", "answer"];

/**
 * Opaque reasoning state each provider attaches (Anthropic thinking signature, OpenAI encrypted
 * reasoning content, Gemini thought signature). Chat Completions upstreams carry none. The values
 * contain `+`, `/` and `=` so that any re-encoding on the way shows.
 */
export const REASONING_STATE: Partial<Record<ProviderKind, string>> = {
  "openai-responses": "gAAAAABoEncrypted+Reasoning/Blob==",
  anthropic: "EqQBCkgIARABGAIiQAnthropic+Signature/Value==",
  google: "CiQB0e2KbGemini+Thought/Signature==",
};

/** Upstream tool-call ids; Gemini sends none (the gateway makes them up). */
export function upstreamToolCallId(kind: ProviderKind, index: number): string | undefined {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      return `call_Conformance${String(index).padStart(10, "0")}`;
    case "openai-responses":
      return `call_Responses${String(index).padStart(10, "0")}`;
    case "anthropic":
      return `toolu_01Conformance${String(index).padStart(5, "0")}`;
    case "google":
      return undefined;
  }
}

/** Name of the forced tool the Anthropic adapter uses to emulate structured output. */
export const ANTHROPIC_JSON_TOOL = "json_response";

/**
 * The answer in `kind`'s wire format. `jsonTool` (Anthropic only) renders the answer's text as the
 * input of that tool, as a model answers through the structured-output emulation.
 */
export function renderAnswer(
  kind: ProviderKind,
  answer: AnswerSpec,
  options: { stream: boolean; jsonTool?: string },
): UpstreamReply {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      return options.stream ? renderChatStream(kind, answer) : renderChatJson(kind, answer);
    case "openai-responses":
      return options.stream
        ? responsesReply.sse(buildResponseEvents(toResponseSpec(answer)))
        : responsesReply.json(buildResponse(toResponseSpec(answer)));
    case "anthropic":
      return options.stream
        ? renderAnthropicStream(answer, options.jsonTool)
        : anthropicReply.json(
            buildMessage({
              content: anthropicBlocks(answer, options.jsonTool),
              stopReason: anthropicStopReason(answer, options.jsonTool),
              usage: anthropicUsage(answer.usage),
            }),
          );
    case "google":
      return options.stream ? renderGeminiStream(answer) : renderGeminiJson(answer);
  }
}

/** The scripted reply of a scenario that is an answer (`turn` 1, or 2 for the reasoning follow-up). */
export function scriptAnswer(
  kind: ProviderKind,
  scenario: Exclude<ScenarioId, "error-before-output" | "error-mid-stream">,
  options: { stream: boolean; turn?: 1 | 2 },
): UpstreamReply {
  if (scenario === "reasoning" && options.turn === 2) {
    return renderAnswer(kind, SCENARIO_ANSWERS.reasoningFollowUp, options);
  }
  const jsonTool = scenario === "structured-output" && kind === "anthropic" ? ANTHROPIC_JSON_TOOL : undefined;
  return renderAnswer(kind, SCENARIO_ANSWERS[scenario], { ...options, jsonTool });
}

// ---------------------------------------------------------------------------------------------
// Errors

/** What the gateway must answer for {@link errorBeforeOutput} of a kind (docs/errors.md). */
export interface ExpectedGatewayError {
  code: ErrorCode;
  status: number;
  openaiType: string;
  anthropicType: string;
  /** `Retry-After` seconds, or undefined when the code is not retryable (no header then). */
  retryAfter?: number;
}

/**
 * An HTTP error before any output, one per kind, covering rate limits (with `Retry-After`,
 * `retry-after-ms` and Gemini's `RetryInfo`), overload (529), an outage and a credentials problem.
 */
export function errorBeforeOutput(kind: ProviderKind): {
  reply: UpstreamReply;
  expected: ExpectedGatewayError;
} {
  switch (kind) {
    case "openai-compatible":
      return {
        reply: fakeReply.error(
          429,
          { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
          { "retry-after": "7" },
        ),
        expected: rateLimited(7),
      };
    case "openai-chat":
      return {
        reply: fakeReply.error(
          500,
          { error: { message: "The server had an error", type: "server_error", param: null, code: null } },
          { "retry-after-ms": "2500" },
        ),
        expected: {
          code: "provider_unavailable",
          status: 502,
          openaiType: "api_error",
          anthropicType: "api_error",
          retryAfter: 3,
        },
      };
    case "openai-responses":
      return {
        reply: fakeReply.error(401, {
          error: {
            message: "Incorrect API key provided: sk-abc***xyz.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
        expected: { code: "provider_auth", status: 502, openaiType: "api_error", anthropicType: "api_error" },
      };
    case "anthropic":
      return {
        reply: anthropicReply.overloaded({ "retry-after": "4" }),
        expected: {
          code: "provider_overloaded",
          status: 529,
          openaiType: "api_error",
          anthropicType: "overloaded_error",
          retryAfter: 4,
        },
      };
    case "google":
      return {
        reply: fakeGoogleReply.error(
          429,
          buildGeminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", [
            { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "6.2s" },
          ]),
        ),
        expected: rateLimited(7),
      };
  }
}

function rateLimited(retryAfter: number): ExpectedGatewayError {
  return {
    code: "provider_rate_limit",
    status: 429,
    openaiType: "rate_limit_error",
    anthropicType: "rate_limit_error",
    retryAfter,
  };
}

/**
 * The upstream fails after {@link PARTIAL_TEXT}. Streamed: the provider's own in-band failure
 * (Chat `data: {"error":…}`, Responses `error` + `response.failed`, Anthropic `event: error`,
 * Gemini an error frame). Not streamed: the JSON body breaks off mid-way (connection reset), the
 * only way a non-streamed answer fails after output began. `expected` is the gateway code.
 */
export function failureAfterText(
  kind: ProviderKind,
  options: { stream: boolean },
): { reply: UpstreamReply; expectedCode: ErrorCode } {
  if (!options.stream) return { reply: truncatedBody(kind), expectedCode: "provider_unavailable" };
  const text = PARTIAL_TEXT;
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      return {
        reply: fakeReply.sse(
          [
            buildChunk({ role: "assistant", content: "", refusal: null }),
            ...text.map((piece) => buildChunk({ content: piece })),
            {
              data: {
                error: {
                  message: "The server had an error while processing your request.",
                  type: "server_error",
                  param: null,
                  code: null,
                },
              },
            },
          ],
          { done: false },
        ),
        expectedCode: "provider_unavailable",
      };
    case "openai-responses": {
      const events = buildResponseEvents({ items: [{ type: "message", text }] });
      // created, in_progress, output_item.added, content_part.added, the text deltas — then failure.
      const beforeFailure = events.slice(0, 4 + text.length);
      return {
        reply: responsesReply.sse(
          numberEvents([...beforeFailure, ...buildFailureEvents({ code: "server_error", message: "boom" })]),
        ),
        expectedCode: "provider_unavailable",
      };
    }
    case "anthropic": {
      const [start, ...deltas] = textBlockEvents(0, text);
      return {
        reply: anthropicReply.sse(
          [
            messageStartEvent({ usage: anthropicUsage(USAGE, { streamedStart: true }) }),
            start,
            pingEvent(),
            ...deltas.slice(0, text.length),
            errorEvent("overloaded_error", "Overloaded"),
          ],
          { padding: true },
        ),
        expectedCode: "provider_overloaded",
      };
    }
    case "google":
      return {
        reply: fakeGoogleReply.sse([
          ...text.map((piece) => buildGeminiChunk([{ text: piece }], { usage: geminiUsage(USAGE) })),
          { data: buildGeminiError(500, "INTERNAL", "An internal error has occurred.") },
        ]),
        expectedCode: "provider_unavailable",
      };
  }
}

/** A 200 JSON body cut off after a few bytes of the answer, then the connection reset. */
function truncatedBody(kind: ProviderKind): UpstreamReply {
  const complete =
    kind === "openai-compatible" || kind === "openai-chat"
      ? JSON.stringify(buildChatCompletion({ content: PARTIAL_TEXT.join("") }))
      : kind === "openai-responses"
        ? JSON.stringify(buildResponse({ items: [{ type: "message", text: PARTIAL_TEXT.join("") }] }))
        : kind === "anthropic"
          ? JSON.stringify(buildMessage({ content: [{ type: "text", text: PARTIAL_TEXT.join("") }] }))
          : JSON.stringify(buildGeminiChunk([{ text: PARTIAL_TEXT.join("") }], { finishReason: "STOP" }));
  const cut = complete.slice(0, complete.indexOf(PARTIAL_TEXT[0]) + PARTIAL_TEXT[0].length);
  return {
    kind: "sse",
    steps: [{ raw: cut }, { delayMs: 20 }, { closeSocket: true }],
    done: false,
    headers: { "content-type": "application/json" },
  } as UpstreamReply;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions wire (openai-compatible, openai-chat)

function chatFinishReason(answer: AnswerSpec): string {
  return answer.finish === "tool-calls" ? "tool_calls" : answer.finish;
}

export function chatUsage(usage: UsageNumbers): Record<string, unknown> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning, audio_tokens: 0 },
  };
}

function renderChatJson(kind: ProviderKind, answer: AnswerSpec): UpstreamReply {
  const text = answer.text?.join("");
  return fakeReply.json(
    buildChatCompletion({
      content: text ?? null,
      ...(answer.reasoning === undefined ? {} : { reasoningContent: answer.reasoning.join("") }),
      toolCalls: (answer.toolCalls ?? []).map((call, index) => ({
        id: upstreamToolCallId(kind, index)!,
        name: call.name,
        arguments: call.arguments,
      })),
      finishReason: chatFinishReason(answer),
      usage: chatUsage(answer.usage),
    }),
  );
}

function renderChatStream(kind: ProviderKind, answer: AnswerSpec): UpstreamReply {
  const chunks: Array<Record<string, unknown>> = [
    buildChunk({ role: "assistant", content: answer.text === undefined ? null : "", refusal: null }),
  ];
  for (const piece of answer.reasoning ?? []) chunks.push(buildChunk({ reasoning_content: piece }));
  for (const piece of answer.text ?? []) chunks.push(buildChunk({ content: piece }));
  (answer.toolCalls ?? []).forEach((call, index) => {
    chunks.push(
      buildChunk({
        tool_calls: [
          {
            index,
            id: upstreamToolCallId(kind, index),
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      }),
    );
    for (const fragment of call.fragments) {
      chunks.push(buildChunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });
  chunks.push(buildChunk({}, { finishReason: chatFinishReason(answer) }));
  chunks.push(buildUsageChunk(chatUsage(answer.usage)));
  return fakeReply.sse(chunks);
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses wire

export function responsesUsage(usage: UsageNumbers): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: usage.input + usage.output,
  };
}

function toResponseSpec(answer: AnswerSpec): ResponseSpec {
  const items: ResponseItemSpec[] = [];
  if (answer.reasoning !== undefined) {
    items.push({
      type: "reasoning",
      summary: [answer.reasoning],
      encryptedContent: REASONING_STATE["openai-responses"],
      // OpenAI sends a different blob on output_item.added than on done [observed].
      encryptedContentAdded: "gAAAAABoPreliminary==",
    });
  }
  if (answer.text !== undefined) items.push({ type: "message", text: answer.text });
  (answer.toolCalls ?? []).forEach((call, index) => {
    items.push({
      type: "function_call",
      name: call.name,
      arguments: call.fragments,
      callId: upstreamToolCallId("openai-responses", index),
    });
  });
  return {
    items,
    usage: responsesUsage(answer.usage),
    ...(answer.finish === "length" ? { status: "incomplete", incompleteReason: "max_output_tokens" } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages wire

export function anthropicUsage(
  usage: UsageNumbers,
  options: { streamedStart?: boolean } = {},
): Record<string, unknown> {
  return {
    input_tokens: usage.input - usage.cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cached,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    // message_start reports 1 output token so far; message_delta the cumulative final count.
    output_tokens: options.streamedStart ? 1 : usage.output,
    ...(usage.reasoning > 0 && !options.streamedStart
      ? { output_tokens_details: { thinking_tokens: usage.reasoning } }
      : {}),
    service_tier: "standard",
  };
}

function anthropicStopReason(answer: AnswerSpec, jsonTool: string | undefined): string {
  if (jsonTool !== undefined) return "tool_use";
  return answer.finish === "tool-calls" ? "tool_use" : answer.finish === "length" ? "max_tokens" : "end_turn";
}

function anthropicBlocks(answer: AnswerSpec, jsonTool: string | undefined): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (answer.reasoning !== undefined) {
    blocks.push({
      type: "thinking",
      thinking: answer.reasoning.join(""),
      signature: REASONING_STATE.anthropic,
    });
  }
  const text = answer.text?.join("");
  if (text !== undefined && jsonTool !== undefined) {
    blocks.push({
      type: "tool_use",
      id: upstreamToolCallId("anthropic", 9),
      name: jsonTool,
      input: JSON.parse(text),
    });
  } else if (text !== undefined) {
    blocks.push({ type: "text", text });
  }
  (answer.toolCalls ?? []).forEach((call, index) => {
    blocks.push({
      type: "tool_use",
      id: upstreamToolCallId("anthropic", index),
      name: call.name,
      input: JSON.parse(call.arguments),
    });
  });
  return blocks;
}

function renderAnthropicStream(answer: AnswerSpec, jsonTool: string | undefined): UpstreamReply {
  const events: Array<Record<string, unknown> | ReturnType<typeof pingEvent>> = [
    messageStartEvent({ usage: anthropicUsage(answer.usage, { streamedStart: true }) }),
  ];
  let index = 0;
  const pushBlock = (blockEvents: Array<Record<string, unknown>>) => {
    const [start, ...rest] = blockEvents;
    events.push(start);
    if (index === 0) events.push(pingEvent());
    events.push(...rest);
    index += 1;
  };
  if (answer.reasoning !== undefined) {
    pushBlock(thinkingBlockEvents(index, answer.reasoning, REASONING_STATE.anthropic!));
  }
  if (answer.text !== undefined && jsonTool !== undefined) {
    pushBlock(
      toolUseBlockEvents(index, {
        id: upstreamToolCallId("anthropic", 9)!,
        name: jsonTool,
        fragments: answer.text,
      }),
    );
  } else if (answer.text !== undefined) {
    pushBlock(textBlockEvents(index, answer.text));
  }
  (answer.toolCalls ?? []).forEach((call, callIndex) => {
    pushBlock(
      toolUseBlockEvents(index, {
        id: upstreamToolCallId("anthropic", callIndex)!,
        name: call.name,
        fragments: call.fragments,
      }),
    );
  });
  const finalUsage = anthropicUsage(answer.usage);
  events.push(
    messageDeltaEvent({
      stopReason: anthropicStopReason(answer, jsonTool),
      // Cumulative, as the API sends it: only the counters that changed since message_start.
      usage: {
        output_tokens: finalUsage.output_tokens,
        ...(finalUsage.output_tokens_details === undefined
          ? {}
          : { output_tokens_details: finalUsage.output_tokens_details }),
      },
    }),
    messageStopEvent(),
  );
  return anthropicReply.sse(events, { padding: true });
}

// ---------------------------------------------------------------------------------------------
// Gemini wire

export function geminiUsage(usage: UsageNumbers): Record<string, unknown> {
  return {
    promptTokenCount: usage.input,
    // Gemini omits zero counters.
    ...(usage.cached > 0 ? { cachedContentTokenCount: usage.cached } : {}),
    candidatesTokenCount: usage.output - usage.reasoning,
    ...(usage.reasoning > 0 ? { thoughtsTokenCount: usage.reasoning } : {}),
    totalTokenCount: usage.input + usage.output,
  };
}

function geminiFinishReason(answer: AnswerSpec): string {
  return answer.finish === "length" ? "MAX_TOKENS" : "STOP";
}

/** Thought parts, text parts, then function calls; the thought signature rides on the first call. */
function geminiParts(answer: AnswerSpec, options: { split: boolean }): Array<Array<Record<string, unknown>>> {
  const groups: Array<Array<Record<string, unknown>>> = [];
  const add = (parts: Array<Record<string, unknown>>) => {
    if (options.split) groups.push(...parts.map((part) => [part]));
    else groups.push(parts);
  };
  if (answer.reasoning !== undefined) add(answer.reasoning.map((text) => ({ text, thought: true })));
  if (answer.text !== undefined) add(answer.text.map((text) => ({ text })));
  const calls = (answer.toolCalls ?? []).map((call, index) => ({
    functionCall: { name: call.name, args: JSON.parse(call.arguments) },
    ...(index === 0 && answer.reasoning !== undefined ? { thoughtSignature: REASONING_STATE.google } : {}),
  }));
  // Gemini sends a turn's parallel calls together, in one chunk.
  if (calls.length > 0) groups.push(calls);
  return options.split ? groups : [groups.flat()];
}

function renderGeminiJson(answer: AnswerSpec): UpstreamReply {
  const [parts] = geminiParts(answer, { split: false });
  return fakeGoogleReply.json(
    buildGeminiChunk(parts, { finishReason: geminiFinishReason(answer), usage: geminiUsage(answer.usage) }),
  );
}

function renderGeminiStream(answer: AnswerSpec): UpstreamReply {
  const groups = geminiParts(answer, { split: true });
  const usage = geminiUsage(answer.usage);
  const chunks = groups.map((parts, index) =>
    buildGeminiChunk(parts, {
      usage,
      ...(index === groups.length - 1 ? { finishReason: geminiFinishReason(answer) } : {}),
    }),
  );
  return fakeGoogleReply.sse(chunks);
}
