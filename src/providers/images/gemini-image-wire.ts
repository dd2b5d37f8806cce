/**
 * Gemini's image models (`gemini-2.5-flash-image`, `gemini-3-pro-image-preview`, …) through
 * `POST {base}/models/{model}:generateContent` with `x-goog-api-key`,
 * `generationConfig.responseModalities: ["IMAGE"]` and the size as `imageConfig.aspectRatio`.
 * The image comes back as an `inlineData {mimeType, data}` part of the first candidate (the
 * proto's snake_case `inline_data` is accepted too); a refusal is `promptFeedback.blockReason` or
 * a safety `finishReason`, with HTTP 200.
 */
import type { ImageProviderSettings, ImageSize } from "../../config/server-tools/image-config.js";
import { isRecord, type ProviderImage, type ProviderImageRequest } from "./provider-image.js";

const ASPECT_RATIOS: Record<ImageSize, string> = {
  "1024x1024": "1:1",
  "1536x1024": "3:2",
  "1024x1536": "2:3",
};

/** Finish reasons that mean the provider's safety or policy filters stopped the image. */
const POLICY_FINISH_REASONS = new Set([
  "SAFETY",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "RECITATION",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

const MAX_TEXT_IN_MESSAGE = 200;

export function buildGeminiImageRequest(
  provider: ImageProviderSettings,
  prompt: string,
  size: ImageSize,
): ProviderImageRequest {
  const headers: Record<string, string> = { ...provider.headers };
  headers["content-type"] = "application/json";
  if (provider.apiKey) headers["x-goog-api-key"] = provider.apiKey;
  const body = {
    contents: [{ role: "user", parts: [{ text: prompt }] }],
    generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: ASPECT_RATIOS[size] } },
  };
  return {
    url: `${provider.baseUrl}/models/${encodeURIComponent(provider.model)}:generateContent`,
    headers,
    body: JSON.stringify(body),
  };
}

export function parseGeminiImageResponse(body: unknown): ProviderImage {
  if (!isRecord(body))
    return { ok: false, reason: "bad_response", message: "The image provider's answer is not JSON" };
  const blockReason = isRecord(body.promptFeedback) ? body.promptFeedback.blockReason : undefined;
  if (typeof blockReason === "string") {
    return {
      ok: false,
      reason: "content_policy",
      message: `The image provider refused the prompt (${blockReason})`,
      providerCode: blockReason,
    };
  }
  const candidate =
    Array.isArray(body.candidates) && isRecord(body.candidates[0]) ? body.candidates[0] : undefined;
  const parts =
    isRecord(candidate?.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  const texts: string[] = [];
  for (const part of parts) {
    if (!isRecord(part)) continue;
    const inline = isRecord(part.inlineData)
      ? part.inlineData
      : isRecord(part.inline_data)
        ? part.inline_data
        : undefined;
    if (inline && typeof inline.data === "string" && inline.data !== "") {
      return {
        ok: true,
        base64: inline.data,
        revisedPrompt: texts.length > 0 ? texts.join("\n") : undefined,
      };
    }
    if (typeof part.text === "string" && part.thought !== true) texts.push(part.text);
  }
  const finishReason = typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined;
  if (finishReason && POLICY_FINISH_REASONS.has(finishReason)) {
    return {
      ok: false,
      reason: "content_policy",
      message: `The image provider refused to draw this (${finishReason})`,
      providerCode: finishReason,
    };
  }
  const said = texts.join(" ").trim();
  const quoted =
    said === ""
      ? ""
      : `; it said: "${said.slice(0, MAX_TEXT_IN_MESSAGE)}${said.length > MAX_TEXT_IN_MESSAGE ? "…" : ""}"`;
  return {
    ok: false,
    reason: "bad_response",
    message: `The image model returned no image${finishReason ? ` (finish reason ${finishReason})` : ""}${quoted}`,
    providerCode: finishReason,
  };
}
