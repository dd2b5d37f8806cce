/** UpstreamCall → the Gemini `generateContent` / `streamGenerateContent` HTTP request. */
import type { UpstreamCall } from "../provider-adapter.js";
import { cleanRequestSchemas } from "./clean-request-schemas.js";
import { convertContents } from "./convert-contents.js";
import { convertGenerationConfig } from "./convert-generation-config.js";
import { convertNativeTools, convertToolChoice, convertTools } from "./convert-tools.js";
import type { GenerateContentBody } from "./wire-types.js";

export interface GenerateContentHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: GenerateContentBody;
}

/**
 * Top-level Gemini fields a caller may pass through, with the snake_case
 * spellings other gateways use. Nothing else is forwarded: OpenAI-only extras would be a 400
 * ("Unknown name"), and `labels` exists only on Vertex (the Gemini API SDKs refuse it).
 */
export const PASSTHROUGH_FIELDS: Readonly<Record<string, "safetySettings" | "cachedContent">> = {
  safetySettings: "safetySettings",
  safety_settings: "safetySettings",
  cachedContent: "cachedContent",
  cached_content: "cachedContent",
};

export function buildGenerateContentRequest(
  call: UpstreamCall,
  options: { stream: boolean },
): GenerateContentHttpRequest {
  return {
    url: buildGenerateContentUrl(call.provider.baseUrl, call.upstreamModel, options),
    headers: buildGenerateContentHeaders(call, options),
    body: buildGenerateContentBody(call),
  };
}

/**
 * `{baseUrl}/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` (without `alt=sse`
 * the streaming method answers with one progressively written JSON array). An id that is already a
 * resource name (`models/x`, `tunedModels/x`) is used as the path. The API key never goes in the URL
 * (it would end up in proxy and access logs); it travels in `x-goog-api-key`.
 */
export function buildGenerateContentUrl(
  baseUrl: string,
  upstreamModel: string,
  options: { stream: boolean },
): string {
  const resource = upstreamModel.includes("/") ? upstreamModel : `models/${upstreamModel}`;
  const path = resource.split("/").map(encodeURIComponent).join("/");
  const method = options.stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return `${baseUrl.replace(/\/+$/, "")}/${path}:${method}`;
}

export function buildGenerateContentBody(call: UpstreamCall): GenerateContentBody {
  const { request } = call;
  const { systemInstruction, contents } = convertContents(request.system, request.messages, {
    upstreamModel: call.upstreamModel,
  });
  const body: GenerateContentBody = { contents };
  if (systemInstruction !== undefined) body.systemInstruction = systemInstruction;
  // Cleaned once per request (admission measured them already): `invalid_request` when too large.
  const schemas = cleanRequestSchemas(request);
  const tools = convertTools(request.tools, schemas.parameters);
  const nativeTools = convertNativeTools(request.nativeServerTools);
  if (tools.length > 0 || nativeTools.length > 0) body.tools = [...tools, ...nativeTools];
  const toolConfig = convertToolChoice(request.toolChoice, tools.length > 0);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  body.generationConfig = convertGenerationConfig(call, schemas.responseSchema);
  for (const [key, value] of Object.entries(request.passthrough)) {
    const field = PASSTHROUGH_FIELDS[key];
    if (field !== undefined && value !== undefined && value !== null) body[field] = value;
  }
  return body;
}

/**
 * Header names are lowercased so a configured header replaces a default instead of travelling next
 * to it. Provider headers may override the key header (e.g. a proxy in front of Gemini), not the
 * request id.
 */
export function buildGenerateContentHeaders(
  call: UpstreamCall,
  options: { stream: boolean },
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: options.stream ? "text/event-stream" : "application/json",
  };
  if (call.provider.apiKey !== undefined && call.provider.apiKey !== "") {
    headers["x-goog-api-key"] = call.provider.apiKey;
  }
  for (const [name, value] of Object.entries(call.provider.headers)) headers[name.toLowerCase()] = value;
  headers["x-gateway-request-id"] = call.requestId;
  return headers;
}
