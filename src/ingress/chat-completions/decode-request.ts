/**
 * A chat-completions request body (already parsed JSON) → the canonical request. Validation errors
 * and rejected features throw GatewayError `invalid_request` with `param` naming the field.
 */
import type { CanonicalRequest, ResponseFormat, SamplingOptions } from "../../canonical/index.js";
import type { HeaderReader } from "../ingress-format.js";
import { createValidationError } from "../shared/describe-validation-issue.js";
import { CACHE_HEADER, readCacheOption } from "../shared/response-cache-option.js";
import { readStrictMode, STRICT_HEADER } from "../shared/wire-extras.js";
import { decodeChatMessages } from "./decode-messages.js";
import { decodeServerTools } from "./decode-server-tools.js";
import { decodeFunctionTools, decodeToolChoice, decodeVerbatimTools } from "./decode-tools.js";
import { rejectUnsupportedFields } from "./reject-unsupported-fields.js";
import {
  type ChatCompletionRequestBody,
  chatCompletionRequestSchema,
  KNOWN_REQUEST_FIELDS,
} from "./request-schema.js";

export function decodeChatRequest(body: unknown, headers?: HeaderReader): CanonicalRequest {
  const parsed = chatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw createValidationError(parsed.error.issues, body);
  const request = parsed.data;
  rejectUnsupportedFields(request);

  const { system, messages } = decodeChatMessages(request.messages);
  const tools = decodeFunctionTools(request.tools);
  const decoded: CanonicalRequest = {
    model: request.model,
    system,
    messages,
    tools,
    sampling: decodeSampling(request),
    serverTools: decodeServerTools(request),
    toolEvents: request.hi_tool_events ?? false,
    stream: request.stream ?? false,
    passthrough: collectPassthrough(body as Record<string, unknown>, request),
    passthroughFormat: "chat_completions",
  };
  if (isSet(request.models)) decoded.models = request.models;
  const verbatimTools = decodeVerbatimTools(request.tools);
  if (verbatimTools.length > 0) decoded.extraTools = verbatimTools;
  if (readStrictMode(request.hi_strict, headers?.get(STRICT_HEADER))) decoded.strict = true;
  const cacheTtl = readCacheOption(request.hi_cache, headers?.get(CACHE_HEADER));
  if (cacheTtl !== undefined) decoded.responseCacheTtlSeconds = cacheTtl;
  const toolChoice = decodeToolChoice(request.tool_choice, tools, request.tools);
  if (toolChoice !== undefined && "param" in toolChoice) decoded.extraFields = [toolChoice];
  else if (toolChoice !== undefined) decoded.toolChoice = toolChoice;
  if (isSet(request.parallel_tool_calls)) decoded.parallelToolCalls = request.parallel_tool_calls;
  // max_tokens is the legacy name; the current one wins when both are sent.
  const maxOutputTokens = request.max_completion_tokens ?? request.max_tokens;
  if (isSet(maxOutputTokens)) decoded.maxOutputTokens = maxOutputTokens;
  const stop = decodeStop(request.stop);
  if (stop !== undefined) decoded.stop = stop;
  if (isSet(request.response_format)) decoded.responseFormat = decodeResponseFormat(request.response_format);
  if (isSet(request.reasoning_effort)) decoded.reasoning = { effort: request.reasoning_effort };
  if (isSet(request.verbosity)) decoded.verbosity = request.verbosity;
  if (isSet(request.user)) decoded.user = request.user;
  return decoded;
}

function decodeSampling(request: ChatCompletionRequestBody): SamplingOptions {
  const sampling: SamplingOptions = {};
  if (isSet(request.temperature)) sampling.temperature = request.temperature;
  if (isSet(request.top_p)) sampling.topP = request.top_p;
  if (isSet(request.min_p)) sampling.minP = request.min_p;
  if (isSet(request.top_a)) sampling.topA = request.top_a;
  if (isSet(request.frequency_penalty)) sampling.frequencyPenalty = request.frequency_penalty;
  if (isSet(request.presence_penalty)) sampling.presencePenalty = request.presence_penalty;
  if (isSet(request.repetition_penalty)) sampling.repetitionPenalty = request.repetition_penalty;
  if (isSet(request.seed)) sampling.seed = request.seed;
  if (isSet(request.logit_bias)) sampling.logitBias = request.logit_bias;
  if (isSet(request.logprobs)) sampling.logprobs = request.logprobs;
  if (isSet(request.top_logprobs)) sampling.topLogprobs = request.top_logprobs;
  return sampling;
}

function decodeStop(stop: ChatCompletionRequestBody["stop"]): string[] | undefined {
  if (!isSet(stop)) return undefined;
  if (typeof stop === "string") return [stop];
  return stop.length > 0 ? stop : undefined;
}

function decodeResponseFormat(
  format: NonNullable<ChatCompletionRequestBody["response_format"]>,
): ResponseFormat {
  if (format.type !== "json_schema") return { type: format.type };
  const { name, schema, strict, description } = format.json_schema;
  const decoded: ResponseFormat = { type: "json_schema", name, schema };
  if (isSet(strict)) decoded.strict = strict;
  if (isSet(description)) decoded.description = description;
  return decoded;
}

/**
 * Top-level fields the schema does not know, verbatim (provider routing, transforms and
 * other custom fields are forwarded). `prediction` is known and validated but has no canonical
 * field, so it rides along too, for upstreams that speak OpenAI's format.
 */
function collectPassthrough(body: Record<string, unknown>, request: ChatCompletionRequestBody) {
  const passthrough: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!KNOWN_REQUEST_FIELDS.has(key)) passthrough[key] = body[key];
  if (isSet(request.prediction)) passthrough.prediction = body.prediction;
  return passthrough;
}

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}
