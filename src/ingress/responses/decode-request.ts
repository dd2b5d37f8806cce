/**
 * A responses request body (already parsed JSON) → the canonical request. Validation errors and
 * rejected features throw GatewayError `invalid_request` with `param` naming the field.
 */
import type { CanonicalRequest, ResponseFormat, SamplingOptions } from "../../canonical/index.js";
import type { HeaderReader } from "../ingress-format.js";
import { createValidationError } from "../shared/describe-validation-issue.js";
import { CACHE_HEADER, readCacheOption } from "../shared/response-cache-option.js";
import { readStrictMode, STRICT_HEADER } from "../shared/wire-extras.js";
import { decodeInput } from "./decode-input.js";
import { decodeServerTools } from "./decode-server-tools.js";
import { decodeFunctionTools, decodeToolChoice, decodeVerbatimTools } from "./decode-tools.js";
import type { ItemSeal } from "./item-seal.js";
import { rejectUnsupportedFields } from "./reject-unsupported-fields.js";
import {
  KNOWN_REQUEST_FIELDS,
  type ResponsesRequestBody,
  type ResponsesTextFormatBody,
  responsesRequestSchema,
} from "./request-schema.js";

/** Known fields that have no canonical counterpart but mean something to a Responses upstream. */
const FORWARDED_KNOWN_FIELDS = ["include", "max_tool_calls"] as const;

/** `itemSeal` resolves `item_reference`s to items the gateway sealed into their ids (item-seal.ts). */
export function decodeResponsesRequest(
  body: unknown,
  options: { itemSeal?: ItemSeal; headers?: HeaderReader } = {},
): CanonicalRequest {
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) throw createValidationError(parsed.error.issues, body);
  const request = parsed.data;
  rejectUnsupportedFields(request);

  const { system, messages } = decodeInput(request.input, request.instructions, options.itemSeal);
  const tools = decodeFunctionTools(request.tools);
  const decoded: CanonicalRequest = {
    model: request.model,
    system,
    messages,
    tools,
    sampling: decodeSampling(request),
    serverTools: decodeServerTools(request.tools),
    toolEvents: request.hi_tool_events ?? false,
    stream: request.stream ?? false,
    passthrough: collectPassthrough(body as Record<string, unknown>),
    passthroughFormat: "responses",
  };
  if (isSet(request.models)) decoded.models = request.models;
  const verbatimTools = decodeVerbatimTools(request.tools);
  if (verbatimTools.length > 0) decoded.extraTools = verbatimTools;
  if (readStrictMode(request.hi_strict, options.headers?.get(STRICT_HEADER))) decoded.strict = true;
  const cacheTtl = readCacheOption(request.hi_cache, options.headers?.get(CACHE_HEADER));
  if (cacheTtl !== undefined) decoded.responseCacheTtlSeconds = cacheTtl;
  const toolChoice = decodeToolChoice(request.tool_choice, tools, request.tools);
  if (toolChoice !== undefined && "param" in toolChoice) decoded.extraFields = [toolChoice];
  else if (toolChoice !== undefined) decoded.toolChoice = toolChoice;
  if (isSet(request.parallel_tool_calls)) decoded.parallelToolCalls = request.parallel_tool_calls;
  if (isSet(request.max_output_tokens)) decoded.maxOutputTokens = request.max_output_tokens;
  if (isSet(request.max_tool_calls)) decoded.maxToolCalls = request.max_tool_calls;
  if (isSet(request.text?.format)) decoded.responseFormat = decodeTextFormat(request.text.format);
  if (isSet(request.text?.verbosity)) decoded.verbosity = request.text.verbosity;
  // `reasoning.summary` is accepted and ignored: summaries are whatever the upstream returns.
  if (isSet(request.reasoning?.effort)) decoded.reasoning = { effort: request.reasoning.effort };
  // safety_identifier is OpenAI's successor of `user` for abuse monitoring, so it wins.
  const user = request.safety_identifier ?? request.user;
  if (isSet(user)) decoded.user = user;
  if (request.store === false) decoded.noItemReferences = true;
  return decoded;
}

function decodeSampling(request: ResponsesRequestBody): SamplingOptions {
  const sampling: SamplingOptions = {};
  if (isSet(request.temperature)) sampling.temperature = request.temperature;
  if (isSet(request.top_p)) sampling.topP = request.top_p;
  if (isSet(request.frequency_penalty)) sampling.frequencyPenalty = request.frequency_penalty;
  if (isSet(request.presence_penalty)) sampling.presencePenalty = request.presence_penalty;
  if (isSet(request.seed)) sampling.seed = request.seed;
  if (isSet(request.logit_bias)) sampling.logitBias = request.logit_bias;
  if (isSet(request.top_logprobs)) {
    // In this format top_logprobs alone asks for log probabilities; chat-style upstreams need both.
    sampling.logprobs = true;
    sampling.topLogprobs = request.top_logprobs;
  }
  return sampling;
}

function decodeTextFormat(format: ResponsesTextFormatBody): ResponseFormat {
  if (format.type !== "json_schema") return { type: format.type };
  const decoded: ResponseFormat = { type: "json_schema", name: format.name, schema: format.schema };
  if (isSet(format.strict)) decoded.strict = format.strict;
  if (isSet(format.description)) decoded.description = format.description;
  return decoded;
}

/**
 * Top-level fields the schema does not know, verbatim, plus `include` and `max_tool_calls`, which
 * only a Responses upstream understands. `service_tier` is deliberately not forwarded: the gateway
 * owns tiering.
 */
function collectPassthrough(body: Record<string, unknown>): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!KNOWN_REQUEST_FIELDS.has(key)) passthrough[key] = body[key];
  for (const key of FORWARDED_KNOWN_FIELDS) if (isSet(body[key])) passthrough[key] = body[key];
  return passthrough;
}

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}
