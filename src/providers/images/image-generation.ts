/** What one image generation gives: the image, or a typed failure that says why not. */

import type { ImageSize } from "../../config/server-tools/image-config.js";
import type { ErrorCode } from "../../errors/catalog.js";

export interface ImageRequest {
  /** What to draw, as the model wrote it. */
  prompt: string;
  /** One of IMAGE_SIZES; the provider's default size when absent. */
  size?: string;
}

export interface GeneratedImage {
  /** The image file, base64 (no data-URL prefix). */
  base64: string;
  /** From the image's own bytes: `image/png`, `image/jpeg`, `image/webp` or `image/gif`. */
  mediaType: string;
  /** Pixel size read from the image's header, when the format allows. */
  width?: number;
  height?: number;
  /** The size asked for (`1024x1024`, …). */
  requestedSize: ImageSize;
  /** The prompt as the provider rewrote it (OpenAI DALL·E 3), or the text a Gemini model wrote. */
  revisedPrompt?: string;
  providerId: string;
  model: string;
  /** The provider's price for this image and size; charged only on success. */
  costMicroUsd: number;
  durationMs: number;
}

export type ImageFailureReason =
  /** No provider is configured with its key present. */
  | "not_configured"
  /** The model's arguments are unusable (empty prompt, unknown size, prompt too long). */
  | "invalid_request"
  /** The provider refused the prompt or the image on content-policy grounds. */
  | "content_policy"
  /** No answer within the provider's deadline. */
  | "timeout"
  /** The provider answered with an HTTP error (see `status` and `errorCode`). */
  | "http_error"
  /** The connection failed (refused, reset, DNS). */
  | "network_error"
  /** A 2xx answer without a usable image (no image data, not an image, too large). */
  | "bad_response"
  /** The caller's signal aborted the call. */
  | "aborted";

export interface ImageFailure {
  reason: ImageFailureReason;
  /** One sentence for the model or the caller; never contains a credential. */
  message: string;
  /** The provider that failed last (absent for not_configured / invalid_request). */
  providerId?: string;
  /** HTTP status of the provider's answer, when there was one. */
  status?: number;
  /** The provider's failure classified into the gateway's error catalog. */
  errorCode?: ErrorCode;
  /** The provider's own error code (`moderation_blocked`, `RESOURCE_EXHAUSTED`, a finish reason). */
  providerCode?: string;
}

export type ImageGenerationOutcome =
  | { ok: true; image: GeneratedImage }
  | { ok: false; failure: ImageFailure };
