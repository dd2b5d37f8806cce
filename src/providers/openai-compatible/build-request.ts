/** UpstreamCall → the Chat Completions HTTP request (URL, headers, JSON body). */
import type { UpstreamCall } from "../provider-adapter.js";
import { convertMessages } from "./convert-messages.js";
import { convertResponseFormat, convertToolChoice, convertTools } from "./convert-tools.js";
import type { ChatCompletionsBody } from "./wire-types.js";

export interface ChatCompletionsHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: ChatCompletionsBody;
}

/** Fields the caller's pass-through extras may never replace: they define what we asked for. */
const PROTECTED_FIELDS = new Set(["model", "messages", "stream", "stream_options"]);

export function buildChatCompletionsRequest(
  call: UpstreamCall,
  options: { stream: boolean },
): ChatCompletionsHttpRequest {
  return {
    url: `${call.provider.baseUrl}/chat/completions`,
    headers: buildChatCompletionsHeaders(call, options),
    body: buildChatCompletionsBody(call, options),
  };
}

export function buildChatCompletionsBody(
  call: UpstreamCall,
  options: { stream: boolean },
): ChatCompletionsBody {
  const { request } = call;
  const { sampling } = request;
  const body: ChatCompletionsBody = {
    model: call.upstreamModel,
    messages: convertMessages(request.system, request.messages),
  };
  if (request.tools.length > 0) body.tools = convertTools(request.tools);
  if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  body.max_completion_tokens = call.maxOutputTokens;
  setIfDefined(body, "temperature", sampling.temperature);
  setIfDefined(body, "top_p", sampling.topP);
  setIfDefined(body, "frequency_penalty", sampling.frequencyPenalty);
  setIfDefined(body, "presence_penalty", sampling.presencePenalty);
  setIfDefined(body, "seed", sampling.seed);
  setIfDefined(body, "logit_bias", sampling.logitBias);
  setIfDefined(body, "logprobs", sampling.logprobs);
  setIfDefined(body, "top_logprobs", sampling.topLogprobs);
  // Not OpenAI parameters, but the ones vLLM, OpenRouter and llama.cpp-style hosts understand.
  setIfDefined(body, "top_k", sampling.topK);
  setIfDefined(body, "min_p", sampling.minP);
  setIfDefined(body, "top_a", sampling.topA);
  setIfDefined(body, "repetition_penalty", sampling.repetitionPenalty);
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.responseFormat !== undefined)
    body.response_format = convertResponseFormat(request.responseFormat);
  setIfDefined(body, "reasoning_effort", request.reasoning?.effort);
  setIfDefined(body, "verbosity", request.verbosity);
  setIfDefined(body, "user", request.user);

  for (const [key, value] of Object.entries(request.passthrough)) {
    if (!PROTECTED_FIELDS.has(key)) body[key] = value;
  }

  if (options.stream) {
    body.stream = true;
    // Usage is always requested: metering needs it even when the caller did not ask (F41).
    // Other stream options the caller passed through (e.g. include_obfuscation) are kept.
    const callerOptions = request.passthrough.stream_options;
    body.stream_options = { ...(isRecord(callerOptions) ? callerOptions : {}), include_usage: true };
  }
  return body;
}

/**
 * Header names are lowercased so a configured header replaces a default instead of travelling
 * next to it. Provider headers may override auth (e.g. an `api-key` host) but not the request id.
 */
export function buildChatCompletionsHeaders(
  call: UpstreamCall,
  options: { stream: boolean },
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: options.stream ? "text/event-stream" : "application/json",
  };
  if (call.provider.apiKey !== undefined && call.provider.apiKey !== "") {
    headers.authorization = `Bearer ${call.provider.apiKey}`;
  }
  for (const [name, value] of Object.entries(call.provider.headers)) headers[name.toLowerCase()] = value;
  headers["x-request-id"] = call.requestId;
  headers["x-gateway-request-id"] = call.requestId;
  return headers;
}

function setIfDefined(body: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) body[key] = value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
