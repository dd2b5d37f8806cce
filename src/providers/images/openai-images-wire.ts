/**
 * OpenAI's Images API for the GPT image models (`gpt-image-1`, `gpt-image-1-mini`,
 * `gpt-image-1.5`, `gpt-image-2`): `POST {base}/images/generations` with
 * `{model, prompt, n: 1, size, quality?, output_format?}`, bearer key; the answer is
 * `{created, data: [{b64_json, revised_prompt?}], size?, output_format?, usage?}`. A refused
 * prompt is a 400 whose `error.code` is `moderation_blocked` (GPT image models) or
 * `content_policy_violation` (DALL·E).
 */
import type { ImageProviderSettings, ImageSize } from "../../config/server-tools/image-config.js";
import { isRecord, type ProviderImage, type ProviderImageRequest } from "./provider-image.js";

const CONTENT_POLICY_CODES = new Set(["moderation_blocked", "content_policy_violation"]);

export function buildOpenAiImageRequest(
  provider: ImageProviderSettings,
  prompt: string,
  size: ImageSize,
): ProviderImageRequest {
  const headers: Record<string, string> = { ...provider.headers };
  headers["content-type"] = "application/json";
  if (provider.apiKey) headers.authorization = `Bearer ${provider.apiKey}`;
  const body: Record<string, unknown> = { model: provider.model, prompt, n: 1, size };
  if (provider.quality) body.quality = provider.quality;
  if (provider.outputFormat) body.output_format = provider.outputFormat;
  return { url: `${provider.baseUrl}/images/generations`, headers, body: JSON.stringify(body) };
}

export function parseOpenAiImageResponse(body: unknown): ProviderImage {
  const first = isRecord(body) && Array.isArray(body.data) ? body.data[0] : undefined;
  if (!isRecord(first)) {
    return { ok: false, reason: "bad_response", message: "The image provider's answer holds no image" };
  }
  if (typeof first.b64_json !== "string" || first.b64_json === "") {
    const detail = typeof first.url === "string" ? " (it sent a URL; GPT image models send base64)" : "";
    return {
      ok: false,
      reason: "bad_response",
      message: `The image provider's answer holds no image data${detail}`,
    };
  }
  return {
    ok: true,
    base64: first.b64_json,
    revisedPrompt: typeof first.revised_prompt === "string" ? first.revised_prompt : undefined,
  };
}

/** The provider's code when an error body says the prompt or image broke its content policy. */
export function findOpenAiContentPolicyCode(body: unknown): string | undefined {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = typeof error?.code === "string" ? error.code : undefined;
  return code !== undefined && CONTENT_POLICY_CODES.has(code) ? code : undefined;
}
