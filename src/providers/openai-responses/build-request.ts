/**
 * UpstreamCall → the Responses HTTP request (`POST {baseUrl}/responses`).
 *
 * Stateless by construction: `store: false` always, and the caller's pass-through fields that
 * would make OpenAI keep or look up state (`previous_response_id`, `store`, `background`,
 * `conversation`) are never forwarded. Reasoning models (catalog feature `reasoning`) get
 * `reasoning: {effort, summary: "auto"}` and `include: ["reasoning.encrypted_content"]`, the only
 * way to carry their reasoning to the next turn without storage; other models get neither, since
 * they reject encrypted content.
 *
 * What the format cannot express:
 * - stop sequences: rejected with `invalid_request` (param `stop`) rather than silently ignored;
 * - seed, penalties, logit bias, logprobs and the vLLM-style extensions: Responses has no such
 *   parameters; they are sampling hints and are left out. `top_logprobs` is left out as well: the
 *   canonical result has no place for log probabilities;
 * - the chat-only `prediction` pass-through field is left out (Responses rejects it).
 *
 * A web search OpenAI runs itself (`request.nativeServerTools`) is a `web_search` tool, with
 * `include: ["web_search_call.action.sources"]` and `max_tool_calls` set to the calls allowed.
 */

import { GatewayError } from "../../errors/gateway-error.js";
import { buildUpstreamHeaders } from "../openai-compatible/build-headers.js";
import { isReasoningModel, selectSupportedSampling } from "../openai-compatible/openai-reasoning-rules.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { fitEndUserId } from "../shared/fit-end-user-id.js";
import { readOpenAiPassthrough } from "../shared/openai-shared-fields.js";
import { resolveReasoningEffort } from "../shared/resolve-reasoning-effort.js";
import { applyExtraFields, extraFieldsFor, extraToolsFor } from "../shared/wire-extras.js";
import { convertInput, convertInstructions } from "./convert-input.js";
import { convertNativeTools, convertTextFormat, convertToolChoice, convertTools } from "./convert-tools.js";
import { WEB_SEARCH_SOURCES_INCLUDE } from "./read-web-search-items.js";
import type { ResponsesBody } from "./wire-types.js";

export interface ResponsesHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: ResponsesBody;
}

export const ENCRYPTED_REASONING_INCLUDE = "reasoning.encrypted_content";

/** Fields the pass-through may not set: they define the request or would break statelessness. */
export const NOT_FORWARDED: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "stream",
  "include",
  "store",
  "previous_response_id",
  "background",
  "conversation",
  "prediction",
]);
/** `excludedParams` never removes these. */
const ALWAYS_SENT_FIELDS = new Set(["model", "input", "stream", "store"]);

export function buildResponsesRequest(
  call: UpstreamCall,
  options: { stream: boolean },
): ResponsesHttpRequest {
  return {
    url: `${call.provider.baseUrl}/responses`,
    headers: buildUpstreamHeaders(call, options),
    body: buildResponsesBody(call, options),
  };
}

export function buildResponsesBody(call: UpstreamCall, options: { stream: boolean }): ResponsesBody {
  const { request } = call;
  if (request.stop !== undefined && request.stop.length > 0) {
    throw GatewayError.invalidRequest("Stop sequences are not supported by this model", "stop");
  }
  const reasoningModel = isReasoningModel(call.model);
  const effort = resolveReasoningEffort(request.reasoning);
  const sampling = selectSupportedSampling(request.sampling, call.model, effort);

  const body: ResponsesBody = {
    model: call.upstreamModel,
    input: convertInput(request.messages, call.upstreamModel),
    store: false,
  };
  const instructions = convertInstructions(request.system);
  if (instructions !== undefined) body.instructions = instructions;
  const nativeTools = convertNativeTools(request.nativeServerTools);
  // Tools of types the gateway has no vocabulary for (Codex's `namespace`, `custom`), as they came.
  const verbatimTools = extraToolsFor(request, "responses");
  if (request.tools.length > 0 || nativeTools.length > 0 || verbatimTools.length > 0) {
    body.tools = [...convertTools(request.tools), ...nativeTools, ...verbatimTools];
  }
  if (nativeTools.length > 0) {
    // The one limit OpenAI takes on its own tools' calls: all of them in this response.
    body.max_tool_calls = (request.nativeServerTools ?? []).reduce((sum, tool) => sum + tool.maxUses, 0);
  }
  if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
  // A tool_choice of a form the gateway has no vocabulary for (`allowed_tools`), from a caller of
  // this format: as it came.
  applyExtraFields(body, extraFieldsFor(request, "responses"));
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  body.max_output_tokens = call.maxOutputTokens;
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.topP !== undefined) body.top_p = sampling.topP;

  const text: Record<string, unknown> = {};
  if (request.responseFormat !== undefined) text.format = convertTextFormat(request.responseFormat);
  // Non-reasoning models reject `verbosity` (and `reasoning`) with 400.
  if (reasoningModel && request.verbosity !== undefined) text.verbosity = request.verbosity;
  if (Object.keys(text).length > 0) body.text = text;

  // A caller's own request for encrypted reasoning (Codex always sends one) is dropped for a model
  // that does not reason: the API answers it with 400 "Encrypted content is not supported".
  const passthrough = readOpenAiPassthrough(request, "responses");
  const include = readCallerInclude(passthrough.include).filter(
    (entry) => entry !== ENCRYPTED_REASONING_INCLUDE,
  );
  if (reasoningModel) {
    body.reasoning = effort === undefined ? { summary: "auto" } : { effort, summary: "auto" };
    include.push(ENCRYPTED_REASONING_INCLUDE);
  }
  // A search's sources come only when asked for; the caller's formats show them.
  if (nativeTools.length > 0 && !include.includes(WEB_SEARCH_SOURCES_INCLUDE)) {
    include.push(WEB_SEARCH_SOURCES_INCLUDE);
  }
  if (include.length > 0) body.include = include;
  // 64 characters at most; a longer identifier is hashed, never the reason for a refusal.
  if (request.user !== undefined) body.safety_identifier = fitEndUserId(request.user);

  for (const [key, value] of Object.entries(passthrough)) {
    if (!NOT_FORWARDED.has(key)) body[key] = value;
  }
  if (options.stream) body.stream = true;

  // Last, so a parameter the host rejects never goes out, whether we or the caller set it.
  for (const key of call.provider.quirks.excludedParams) {
    if (!ALWAYS_SENT_FIELDS.has(key)) delete body[key];
  }
  return body;
}

/** The caller's own `include` entries (e.g. logprobs), kept next to the ones we add. */
function readCallerInclude(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : [];
}
