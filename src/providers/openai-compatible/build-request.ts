/**
 * UpstreamCall → the Chat Completions HTTP request (URL, headers, JSON body). What differs between
 * hosts comes in as data: the adapter's {@link ChatDialect} and the provider's `quirks`
 * (excluded parameters, output-cap field name, tool-call id shape).
 */

import type { UpstreamCall } from "../provider-adapter.js";
import { fitEndUserId } from "../shared/fit-end-user-id.js";
import { readOpenAiPassthrough } from "../shared/openai-shared-fields.js";
import { resolveReasoningEffort } from "../shared/resolve-reasoning-effort.js";
import { applyExtraFields, extraFieldsFor, extraToolsFor } from "../shared/wire-extras.js";
import { buildUpstreamHeaders } from "./build-headers.js";
import { type ChatDialect, OPENAI_COMPATIBLE_DIALECT } from "./chat-dialect.js";
import { convertMessages } from "./convert-messages.js";
import { convertResponseFormat, convertToolChoice, convertTools } from "./convert-tools.js";
import { isReasoningModel, selectSupportedSampling } from "./openai-reasoning-rules.js";
import { createToolCallIdRewriter } from "./rewrite-tool-call-id.js";
import type { ChatCompletionsBody } from "./wire-types.js";

export interface ChatCompletionsHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: ChatCompletionsBody;
}

export interface BuildChatRequestOptions {
  stream: boolean;
  /** Defaults to the plain `openai-compatible` dialect. */
  dialect?: ChatDialect;
}

/**
 * Fields the caller's pass-through extras may never replace, and that `excludedParams` never
 * removes: they define what we asked for.
 */
export const PROTECTED_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
]);
/** `excludedParams` may drop `stream_options` (some hosts reject it), never these. */
const ALWAYS_SENT_FIELDS = new Set(["model", "messages", "stream"]);

export function buildChatCompletionsRequest(
  call: UpstreamCall,
  options: BuildChatRequestOptions,
): ChatCompletionsHttpRequest {
  return {
    url: `${call.provider.baseUrl}/chat/completions`,
    headers: buildUpstreamHeaders(call, options),
    body: buildChatCompletionsBody(call, options),
  };
}

export function buildChatCompletionsBody(
  call: UpstreamCall,
  options: BuildChatRequestOptions,
): ChatCompletionsBody {
  const dialect = options.dialect ?? OPENAI_COMPATIBLE_DIALECT;
  const { request } = call;
  const { quirks } = call.provider;
  const reasoningRules = dialect.appliesOpenAiReasoningRules;
  const reasoningModel = isReasoningModel(call.model);
  const effort = resolveReasoningEffort(request.reasoning);
  const sampling = reasoningRules
    ? selectSupportedSampling(request.sampling, call.model, effort)
    : request.sampling;

  const body: ChatCompletionsBody = {
    model: call.upstreamModel,
    messages: convertMessages(request.system, request.messages, {
      systemRole: reasoningRules && reasoningModel ? "developer" : "system",
      includeReasoningText: dialect.sendsReasoningText,
      rewriteToolCallId: createToolCallIdRewriter(quirks.toolCallIdFormat),
    }),
  };
  // Tools of types the gateway has no vocabulary for, from a Chat caller (`custom`): as they came.
  const verbatimTools = extraToolsFor(request, "chat_completions");
  if (request.tools.length > 0 || verbatimTools.length > 0)
    body.tools = [...convertTools(request.tools), ...verbatimTools];
  if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
  // A tool_choice of a form the gateway has no vocabulary for (`allowed_tools`), from a caller of
  // this format: as it came.
  applyExtraFields(body, extraFieldsFor(request, "chat_completions"));
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  body[quirks.maxTokensField] = call.maxOutputTokens;
  setIfDefined(body, "temperature", sampling.temperature);
  setIfDefined(body, "top_p", sampling.topP);
  setIfDefined(body, "frequency_penalty", sampling.frequencyPenalty);
  setIfDefined(body, "presence_penalty", sampling.presencePenalty);
  setIfDefined(body, "seed", sampling.seed);
  setIfDefined(body, "logit_bias", sampling.logitBias);
  setIfDefined(body, "logprobs", sampling.logprobs);
  setIfDefined(body, "top_logprobs", sampling.topLogprobs);
  if (dialect.sendsExtendedSampling) {
    // Not OpenAI parameters, but the ones vLLM, OpenRouter and llama.cpp-style hosts understand.
    setIfDefined(body, "top_k", sampling.topK);
    setIfDefined(body, "min_p", sampling.minP);
    setIfDefined(body, "top_a", sampling.topA);
    setIfDefined(body, "repetition_penalty", sampling.repetitionPenalty);
  }
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.responseFormat !== undefined)
    body.response_format = convertResponseFormat(request.responseFormat);
  // OpenAI's non-reasoning models reject both fields; other hosts decide for themselves.
  if (!reasoningRules || reasoningModel) {
    setIfDefined(body, "reasoning_effort", effort);
    setIfDefined(body, "verbosity", request.verbosity);
  }
  // OpenAI allows 64 characters; a longer identifier is hashed, never the reason for a refusal.
  setIfDefined(body, dialect.userField, request.user === undefined ? undefined : fitEndUserId(request.user));

  // Unknown fields of a chat caller go upstream verbatim; another format's are meaningless to a
  // Chat Completions host and would be rejected, except the fields both OpenAI formats share.
  const passthrough = readOpenAiPassthrough(request, "chat_completions");
  for (const [key, value] of Object.entries(passthrough)) {
    if (!PROTECTED_FIELDS.has(key)) body[key] = value;
  }

  if (options.stream) {
    body.stream = true;
    // Usage is always requested: metering needs it even when the caller did not ask.
    // Other stream options the caller passed through (e.g. include_obfuscation) are kept.
    const callerOptions = passthrough.stream_options;
    body.stream_options = isRecord(callerOptions)
      ? Object.fromEntries([...Object.entries(callerOptions), ["include_usage", true]])
      : { include_usage: true };
  }

  // Last, so a parameter the host rejects never goes out, whether we or the caller set it.
  for (const key of quirks.excludedParams) {
    if (!ALWAYS_SENT_FIELDS.has(key)) delete body[key];
  }
  return body;
}

function setIfDefined(body: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) body[key] = value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
