/**
 * A messages request body (already parsed JSON) and its headers → the canonical request. Validation
 * errors and rejected features throw GatewayError `invalid_request` with `param` naming the field.
 */
import type {
  CanonicalRequest,
  ReasoningOptions,
  ResponseFormat,
  SamplingOptions,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { HeaderReader } from "../ingress-format.js";
import { createValidationError } from "../shared/describe-validation-issue.js";
import { CACHE_HEADER, readCacheOption } from "../shared/response-cache-option.js";
import { readStrictMode, STRICT_HEADER } from "../shared/wire-extras.js";
import { decodeMessagesConversation } from "./decode-messages.js";
import {
  decodeFunctionTools,
  decodeMessagesServerTools,
  decodeToolChoice,
  decodeVerbatimTools,
} from "./decode-tools.js";
import { parseAnthropicBetaHeader } from "./parse-anthropic-beta-header.js";
import {
  KNOWN_REQUEST_FIELDS,
  type MessagesRequestBody,
  messagesCountTokensRequestSchema,
  messagesRequestSchema,
} from "./request-schema.js";

/** `POST /api/v1/messages`. `anthropic-version` is accepted whatever its value. */
export function decodeMessagesRequest(body: unknown, headers?: HeaderReader): CanonicalRequest {
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) throw createValidationError(parsed.error.issues, body);
  return decodeParsedRequest(parsed.data, body as Record<string, unknown>, headers);
}

/** `POST /api/v1/messages/count_tokens`: the same body, validated the same way, `max_tokens` optional. */
export function decodeCountTokensRequest(body: unknown, headers?: HeaderReader): CanonicalRequest {
  const parsed = messagesCountTokensRequestSchema.safeParse(body);
  if (!parsed.success) throw createValidationError(parsed.error.issues, body);
  return decodeParsedRequest(parsed.data, body as Record<string, unknown>, headers);
}

function decodeParsedRequest(
  request: MessagesRequestBody,
  body: Record<string, unknown>,
  headers: HeaderReader | undefined,
): CanonicalRequest {
  // The gateway holds no conversations; Anthropic's SDK reads this refusal as "threads unsupported"
  // and sends the whole history without `thread` (its tool runner does so by default).
  if (isSet(body.thread)) {
    throw new GatewayError(
      "invalid_request",
      "Message threads are not supported by this gateway; send the full conversation without thread",
      { param: "thread", details: { error_code: "thread_unsupported_request", unsupported: ["thread"] } },
    );
  }
  if (isSet(request.response_format)) {
    throw GatewayError.invalidRequest(
      "response_format is not supported in the messages format; use a tool definition for structured output",
      "response_format",
    );
  }
  const { system, messages } = decodeMessagesConversation(request.system, request.messages);
  const tools = decodeFunctionTools(request.tools);
  const decoded: CanonicalRequest = {
    model: request.model,
    system,
    messages,
    tools,
    sampling: decodeSampling(request),
    serverTools: decodeMessagesServerTools(request.tools, request.plugins),
    toolEvents: request.hi_tool_events ?? false,
    stream: request.stream ?? false,
    passthrough: collectPassthrough(body),
    passthroughFormat: "anthropic_messages",
  };
  if (isSet(request.models)) decoded.models = request.models;
  const verbatimTools = decodeVerbatimTools(request.tools);
  if (verbatimTools.length > 0) decoded.extraTools = verbatimTools;
  // Accepted whatever its value (Claude Code sends "updates"); only Anthropic has a use for it.
  const display = request.thinking?.type === "disabled" ? undefined : request.thinking?.display;
  if (isSet(display)) {
    decoded.extraFields = [
      {
        family: "anthropic_messages",
        param: "thinking.display",
        path: ["thinking", "display"],
        value: display,
      },
    ];
  }
  if (readStrictMode(request.hi_strict, headers?.get(STRICT_HEADER))) decoded.strict = true;
  const cacheTtl = readCacheOption(request.hi_cache, headers?.get(CACHE_HEADER));
  if (cacheTtl !== undefined) decoded.responseCacheTtlSeconds = cacheTtl;
  const { extraToolChoice, ...choice } = decodeToolChoice(request.tool_choice, tools, verbatimTools);
  Object.assign(decoded, choice);
  if (extraToolChoice !== undefined) decoded.extraFields = [...(decoded.extraFields ?? []), extraToolChoice];
  if (isSet(request.max_tokens)) decoded.maxOutputTokens = request.max_tokens;
  if (isSet(request.stop_sequences) && request.stop_sequences.length > 0)
    decoded.stop = request.stop_sequences;
  const reasoning = decodeReasoning(request);
  if (reasoning !== undefined) decoded.reasoning = reasoning;
  const responseFormat = decodeOutputFormat(request.output_config?.format);
  if (responseFormat !== undefined) decoded.responseFormat = responseFormat;
  if (isSet(request.metadata)) {
    decoded.metadata = request.metadata;
    // `metadata.user_id` is this format's end-user identifier; other upstreams take it as `user`.
    if (typeof request.metadata.user_id === "string") decoded.user = request.metadata.user_id;
  }
  const betas = parseAnthropicBetaHeader(headers);
  if (betas.length > 0) decoded.anthropicBeta = betas;
  return decoded;
}

function decodeSampling(request: MessagesRequestBody): SamplingOptions {
  const sampling: SamplingOptions = {};
  if (isSet(request.temperature)) sampling.temperature = request.temperature;
  if (isSet(request.top_p)) sampling.topP = request.top_p;
  if (isSet(request.top_k)) sampling.topK = request.top_k;
  return sampling;
}

/**
 * `thinking` and `output_config.effort` → canonical reasoning. `adaptive` lets the model decide how
 * much to think: enabled, no budget. Whether a budget fits `max_tokens` is the adapter's call:
 * Anthropic's own rule (budget < max_tokens) does not hold with interleaved thinking or elsewhere.
 */
function decodeReasoning(request: MessagesRequestBody): ReasoningOptions | undefined {
  const reasoning: ReasoningOptions = {};
  const thinking = request.thinking;
  if (isSet(thinking)) {
    reasoning.enabled = thinking.type !== "disabled";
    if (thinking.type === "enabled") {
      if (isSet(thinking.budget_tokens)) reasoning.budgetTokens = thinking.budget_tokens;
    } else if (isSet(thinking.budget_tokens)) {
      throw GatewayError.invalidRequest(
        `thinking.budget_tokens is only allowed with thinking.type "enabled"`,
        "thinking.budget_tokens",
      );
    }
  }
  if (isSet(request.output_config?.effort)) reasoning.effort = request.output_config.effort;
  return Object.keys(reasoning).length > 0 ? reasoning : undefined;
}

/** Anthropic's structured-output form; the canonical JSON schema format needs a name, so it gets one. */
function decodeOutputFormat(
  format: NonNullable<MessagesRequestBody["output_config"]>["format"] | undefined,
): ResponseFormat | undefined {
  if (!isSet(format)) return undefined;
  return { type: "json_schema", name: "output", schema: format.schema };
}

/** Top-level fields the schema does not know, verbatim (e.g. request-level `cache_control`). */
function collectPassthrough(body: Record<string, unknown>): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!KNOWN_REQUEST_FIELDS.has(key)) passthrough[key] = body[key];
  return passthrough;
}

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}
