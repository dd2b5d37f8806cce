/**
 * UpstreamCall → Gemini `generationConfig`: output cap, sampling, stop sequences, structured output
 * and thinking.
 *
 * Canonical options without a Gemini field are not sent: minP, topA, repetitionPenalty, logitBias,
 * logprobs/topLogprobs (Gemini's logprobs use different names and limits), verbosity and `user`
 * (Gemini has no end-user field; abuse monitoring is the gateway's business).
 */
import type { ResponseFormat } from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { cleanSchemaForGemini } from "./clean-schema.js";
import { convertThinkingConfig } from "./convert-thinking-config.js";
import type { GeminiGenerationConfig } from "./wire-types.js";

/** `responseSchema`: the request's response schema, already cleaned (clean-request-schemas.ts). */
export function convertGenerationConfig(
  call: UpstreamCall,
  responseSchema?: Record<string, unknown>,
): GeminiGenerationConfig {
  const { request } = call;
  const { sampling } = request;
  const config: GeminiGenerationConfig = { maxOutputTokens: call.maxOutputTokens };
  setIfDefined(config, "temperature", sampling.temperature);
  setIfDefined(config, "topP", sampling.topP);
  setIfDefined(config, "topK", sampling.topK);
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = request.stop;
  setIfDefined(config, "seed", sampling.seed);
  setIfDefined(config, "presencePenalty", sampling.presencePenalty);
  setIfDefined(config, "frequencyPenalty", sampling.frequencyPenalty);
  Object.assign(config, convertResponseFormat(request.responseFormat, responseSchema));
  const thinkingConfig = convertThinkingConfig(request.reasoning, {
    upstreamModel: call.upstreamModel,
    supportsReasoning: call.model.features.includes("reasoning"),
  });
  if (thinkingConfig !== undefined) config.thinkingConfig = thinkingConfig;
  return config;
}

/**
 * `json_object` → JSON mode; `json_schema` → JSON mode with `responseSchema`, cleaned by the same
 * allowlist as tool parameters (one dialect, one set of tests; `responseJsonSchema` is not used so
 * that every model that has structured output accepts the request).
 */
export function convertResponseFormat(
  format: ResponseFormat | undefined,
  cleanedSchema?: Record<string, unknown>,
): Pick<GeminiGenerationConfig, "responseMimeType" | "responseSchema"> {
  if (format === undefined || format.type === "text") return {};
  if (format.type === "json_object") return { responseMimeType: "application/json" };
  return {
    responseMimeType: "application/json",
    responseSchema: cleanedSchema ?? cleanSchemaForGemini(format.schema),
  };
}

function setIfDefined<K extends keyof GeminiGenerationConfig>(
  config: GeminiGenerationConfig,
  key: K,
  value: GeminiGenerationConfig[K] | undefined,
): void {
  if (value !== undefined) config[key] = value;
}
