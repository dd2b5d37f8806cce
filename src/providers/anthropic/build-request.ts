/** UpstreamCall → the Anthropic Messages HTTP request (URL, headers, JSON body). */
import type { SamplingOptions } from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { applyExtraFields, extraFieldsFor, extraToolsFor } from "../shared/wire-extras.js";
import { convertMessages, convertSystem } from "./convert-messages.js";
import { convertNativeTools, needsWebFetchBeta, WEB_FETCH_BETA } from "./convert-native-tools.js";
import { convertToolSetup } from "./convert-tools.js";
import { resolveThinking } from "./resolve-thinking.js";
import type { AnthropicMessagesBody } from "./wire-types.js";

export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: AnthropicMessagesBody;
  /** Set when structured output is emulated: the parsers read this tool's input as the answer. */
  jsonToolName?: string;
}

/**
 * Top-level Messages API fields a caller may pass through.
 * Only fields Anthropic knows and the gateway does not set itself: anything else — OpenAI-only
 * fields, routing hints of other gateways — would make Anthropic reject the whole request.
 * `cache_control` is request-level automatic caching; `output_config` carries `effort` and is
 * merged with the native structured-output format.
 */
export const PASSTHROUGH_FIELDS: ReadonlySet<string> = new Set([
  "cache_control",
  "container",
  "context_management",
  "inference_geo",
  "mcp_servers",
  "output_config",
  "service_tier",
]);

/** Anthropic's `service_tier` values; OpenAI's (`flex`, `priority`, `default`) are not forwarded. */
export const SERVICE_TIERS: ReadonlySet<string> = new Set(["auto", "standard_only"]);

export function buildAnthropicRequest(
  call: UpstreamCall,
  options: { stream: boolean },
): AnthropicHttpRequest {
  const { body, jsonToolName } = buildAnthropicBody(call, options);
  return {
    url: `${call.provider.baseUrl}/messages`,
    headers: buildAnthropicHeaders(call, options),
    body,
    ...(jsonToolName === undefined ? {} : { jsonToolName }),
  };
}

export function buildAnthropicBody(
  call: UpstreamCall,
  options: { stream: boolean },
): { body: AnthropicMessagesBody; jsonToolName?: string } {
  const { request } = call;
  const thinking = resolveThinking(call);
  const body: AnthropicMessagesBody = {
    model: call.upstreamModel,
    max_tokens: call.maxOutputTokens,
    messages: convertMessages(request.messages, { upstreamModel: call.upstreamModel }),
  };
  const system = convertSystem(request.system);
  if (system !== undefined) body.system = system;

  const setup = convertToolSetup(request, { thinking: thinking !== undefined });
  const nativeTools = convertNativeTools(request.nativeServerTools);
  // Tools of types the gateway has no vocabulary for, from a Messages caller: as they came.
  const verbatimTools = extraToolsFor(request, "anthropic_messages");
  if (setup.tools !== undefined || nativeTools.length > 0 || verbatimTools.length > 0)
    body.tools = [...(setup.tools ?? []), ...nativeTools, ...verbatimTools];
  if (setup.toolChoice !== undefined) body.tool_choice = setup.toolChoice;
  if (thinking !== undefined) body.thinking = thinking;
  // `thinking.display` and the like, where the body has what holds them (list-dropped.ts says
  // which found no place).
  applyExtraFields(body, extraFieldsFor(request, "anthropic_messages"));
  Object.assign(body, convertSampling(request.sampling, { thinking: thinking !== undefined }));
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = request.stop;
  const userId = readUserId(request.metadata) ?? request.user;
  if (userId !== undefined && userId !== "") body.metadata = { user_id: userId };

  for (const [key, value] of Object.entries(request.passthrough)) {
    if (!PASSTHROUGH_FIELDS.has(key) || value === undefined) continue;
    if (key === "service_tier" && !(typeof value === "string" && SERVICE_TIERS.has(value))) continue;
    body[key] = value;
  }
  if (setup.outputFormat !== undefined) {
    const callerConfig = body.output_config;
    const outputConfig: Record<string, unknown> = { ...(isRecord(callerConfig) ? callerConfig : {}) };
    outputConfig.format = setup.outputFormat;
    body.output_config = outputConfig;
  }
  if (options.stream) body.stream = true;
  return { body, ...(setup.jsonToolName === undefined ? {} : { jsonToolName: setup.jsonToolName }) };
}

/**
 * Sampling within Anthropic's ranges. `temperature` is 0..1 there and 0..2 in the OpenAI formats:
 * values above 1 are clamped to 1 (both ends mean "most random"), so every format works with every
 * model instead of failing on a range difference. With thinking on, Anthropic rejects
 * `temperature` and `top_k` and accepts `top_p` only from 0.95: those are not sent (the request
 * still gets its reasoning, which the caller asked for explicitly). Current Claude models reject
 * `temperature` and `top_p` together, so with both set only `temperature` goes (as vercel/ai's
 * Anthropic provider does). OpenAI-only penalties, seeds and logprobs have no Anthropic field and
 * are not sent.
 */
export function convertSampling(
  sampling: SamplingOptions,
  options: { thinking: boolean },
): Pick<AnthropicMessagesBody, "temperature" | "top_p" | "top_k"> {
  const fields: Pick<AnthropicMessagesBody, "temperature" | "top_p" | "top_k"> = {};
  if (!options.thinking && sampling.temperature !== undefined) {
    fields.temperature = Math.min(1, Math.max(0, sampling.temperature));
  }
  const topPAllowed = options.thinking ? (sampling.topP ?? 0) >= 0.95 : fields.temperature === undefined;
  if (sampling.topP !== undefined && topPAllowed) fields.top_p = sampling.topP;
  if (!options.thinking && sampling.topK !== undefined) fields.top_k = sampling.topK;
  return fields;
}

/**
 * Header names are lowercased so a configured header replaces a default instead of travelling
 * next to it. `anthropic-beta` joins the provider's configured betas with the caller's (native
 * messages path only: translated formats never set `request.anthropicBeta`), deduplicated and
 * limited to token characters so a caller cannot smuggle other header content.
 */
export function buildAnthropicHeaders(
  call: UpstreamCall,
  options: { stream: boolean },
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: options.stream ? "text/event-stream" : "application/json",
    "anthropic-version": ANTHROPIC_VERSION,
  };
  if (call.provider.apiKey !== undefined && call.provider.apiKey !== "") {
    headers["x-api-key"] = call.provider.apiKey;
  }
  for (const [name, value] of Object.entries(call.provider.headers)) headers[name.toLowerCase()] = value;
  const betas = joinBetas([
    headers["anthropic-beta"],
    ...(call.request.anthropicBeta ?? []),
    ...(needsWebFetchBeta(call.request.nativeServerTools) ? [WEB_FETCH_BETA] : []),
  ]);
  if (betas === "") delete headers["anthropic-beta"];
  else headers["anthropic-beta"] = betas;
  headers["x-request-id"] = call.requestId;
  headers["x-gateway-request-id"] = call.requestId;
  return headers;
}

function joinBetas(values: Array<string | undefined>): string {
  const betas = new Set<string>();
  for (const value of values) {
    for (const beta of (value ?? "").split(",")) {
      const trimmed = beta.trim();
      if (/^[A-Za-z0-9._-]+$/.test(trimmed)) betas.add(trimmed);
    }
  }
  return [...betas].join(",");
}

function readUserId(metadata: Record<string, unknown> | undefined): string | undefined {
  const value = metadata?.user_id;
  return typeof value === "string" ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
