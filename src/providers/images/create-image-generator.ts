/**
 * The `image` tool's engine: a prompt (and a size) in, one generated image or a typed failure out.
 * Never rejects.
 *
 * Providers are tried in configured order, skipping those whose key is missing from the
 * environment; the next one is tried only when a provider could not serve the call (timeout,
 * connection failure, rejected key, 429, 5xx), never after a refusal or a bad request, which another provider
 * would repeat. Each call has the provider's deadline, from connect to the last byte. A failed
 * call costs nothing; a generated image costs the provider's price for its size.
 */
import { Agent, type Dispatcher } from "undici";
import {
  IMAGE_SIZES,
  type ImageProviderSettings,
  type ImageSize,
  type ImageToolSettings,
  isImageProviderUsable,
  priceImage,
} from "../../config/server-tools/image-config.js";
import { classifyUpstreamError, parseUpstreamErrorBody } from "../shared/classify-upstream-error.js";
import { buildGeminiImageRequest, parseGeminiImageResponse } from "./gemini-image-wire.js";
import type { ImageFailure, ImageGenerationOutcome, ImageRequest } from "./image-generation.js";
import {
  buildOpenAiImageRequest,
  findOpenAiContentPolicyCode,
  parseOpenAiImageResponse,
} from "./openai-images-wire.js";
import type { ProviderImage, ProviderImageRequest } from "./provider-image.js";
import { sendImageRequest } from "./send-image-request.js";
import { sniffBase64Image } from "./sniff-image.js";

export interface ImageGenerator {
  /** At least one provider can be called (`meta.image_generation_configured`). */
  readonly configured: boolean;
  generate(request: ImageRequest, options?: { signal?: AbortSignal }): Promise<ImageGenerationOutcome>;
  /** The most one call can cost (for a reservation): the highest price of any usable provider and size. */
  maxCostMicroUsd(): number;
  /** Closes the connections kept for the providers. */
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_MS = 30_000;

interface ProviderWire {
  build(provider: ImageProviderSettings, prompt: string, size: ImageSize): ProviderImageRequest;
  parse(body: unknown): ProviderImage;
  /** The provider's code when an error body is a content-policy refusal. */
  findContentPolicyCode(body: unknown): string | undefined;
}

const WIRES: Record<ImageProviderSettings["kind"], ProviderWire> = {
  openai: {
    build: buildOpenAiImageRequest,
    parse: parseOpenAiImageResponse,
    findContentPolicyCode: findOpenAiContentPolicyCode,
  },
  gemini: {
    build: buildGeminiImageRequest,
    parse: parseGeminiImageResponse,
    findContentPolicyCode: () => undefined,
  },
};

/** Failures worth another provider: this one could not serve the call at all (its key included). */
const UNAVAILABLE_CODES = new Set([
  "provider_auth",
  "provider_rate_limit",
  "provider_overloaded",
  "provider_unavailable",
  "provider_timeout",
]);

export function createImageGenerator(
  settings: ImageToolSettings,
  dependencies: { dispatcher?: Dispatcher } = {},
): ImageGenerator {
  const usable = settings.providers.filter(isImageProviderUsable);
  const dispatcher =
    dependencies.dispatcher ??
    new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS }, keepAliveTimeout: KEEP_ALIVE_MS, pipelining: 1 });

  async function generate(
    request: ImageRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<ImageGenerationOutcome> {
    if (usable.length === 0) {
      return fail({
        reason: "not_configured",
        message:
          settings.providers.length === 0
            ? "Image generation is not configured on this gateway"
            : `Image generation is not available: no image provider has its API key set (${settings.providers.map((provider) => provider.apiKeyEnv).join(", ")})`,
      });
    }
    const prompt = typeof request.prompt === "string" ? request.prompt.trim() : "";
    if (prompt === "")
      return fail({ reason: "invalid_request", message: "prompt must be a non-empty string" });
    if (prompt.length > settings.maxPromptChars) {
      return fail({
        reason: "invalid_request",
        message: `prompt is ${prompt.length} characters; at most ${settings.maxPromptChars} are accepted`,
      });
    }
    if (request.size !== undefined && request.size !== "auto" && !isImageSize(request.size)) {
      return fail({
        reason: "invalid_request",
        message: `size must be one of ${IMAGE_SIZES.join(", ")}; got ${JSON.stringify(request.size)}`,
      });
    }

    let last: ImageFailure | undefined;
    for (const provider of usable) {
      const size = isImageSize(request.size) ? request.size : provider.defaultSize;
      const outcome = await generateWith(provider, prompt, size, options.signal);
      if (outcome.ok) return outcome;
      last = outcome.failure;
      if (!isUnavailable(last) || options.signal?.aborted) break;
    }
    return fail(last!);
  }

  async function generateWith(
    provider: ImageProviderSettings,
    prompt: string,
    size: ImageSize,
    signal: AbortSignal | undefined,
  ): Promise<ImageGenerationOutcome> {
    const started = performance.now();
    const wire = WIRES[provider.kind];
    const failWith = (failure: ImageFailure): ImageGenerationOutcome => {
      const attributed = { ...failure };
      attributed.providerId = provider.id;
      return fail(attributed);
    };
    const outgoing = wire.build(provider, prompt, size);
    const response = await sendImageRequest({
      url: outgoing.url,
      headers: outgoing.headers,
      body: outgoing.body,
      timeoutMs: provider.timeoutMs,
      signal,
      dispatcher,
    });
    if (!response.ok) return failWith(response.failure);

    const body = parseJson(response.bodyText);
    if (response.status < 200 || response.status >= 300) {
      const policyCode = wire.findContentPolicyCode(body);
      const classified = classifyUpstreamError({
        status: response.status,
        headers: response.headers,
        bodyText: response.bodyText,
      });
      const details = parseUpstreamErrorBody(response.bodyText);
      const providerCode = policyCode ?? details.code ?? details.rpcStatus;
      if (policyCode !== undefined || classified.code === "content_filter") {
        return failWith({
          reason: "content_policy",
          message: `The image provider refused the prompt under its content policy${providerCode ? ` (${providerCode})` : ""}`,
          status: response.status,
          errorCode: "content_filter",
          providerCode,
        });
      }
      return failWith({
        reason: "http_error",
        message: classified.message.replace("upstream provider", "image provider"),
        status: response.status,
        errorCode: classified.code,
        providerCode,
      });
    }

    if (body === undefined) {
      return failWith({
        reason: "bad_response",
        message: "The image provider's answer is not JSON",
        status: response.status,
      });
    }
    const image = wire.parse(body);
    if (!image.ok) {
      return failWith({
        reason: image.reason,
        message: image.message,
        status: response.status,
        errorCode: image.reason === "content_policy" ? "content_filter" : "provider_unavailable",
        providerCode: image.providerCode,
      });
    }
    const sniffed = sniffBase64Image(image.base64);
    if (!sniffed) {
      return failWith({
        reason: "bad_response",
        message: "The image provider's answer is not a PNG, JPEG, WebP or GIF image",
        status: response.status,
      });
    }
    return {
      ok: true,
      image: {
        base64: image.base64,
        mediaType: sniffed.mediaType,
        width: sniffed.width,
        height: sniffed.height,
        requestedSize: size,
        revisedPrompt: image.revisedPrompt,
        providerId: provider.id,
        model: provider.model,
        costMicroUsd: priceImage(provider, size),
        durationMs: Math.round(performance.now() - started),
      },
    };
  }

  return {
    configured: usable.length > 0,
    generate,
    maxCostMicroUsd() {
      let max = 0;
      for (const provider of usable) {
        for (const size of IMAGE_SIZES) max = Math.max(max, priceImage(provider, size));
      }
      return max;
    },
    async close() {
      if (!dependencies.dispatcher) await dispatcher.close();
    },
  };
}

function fail(failure: ImageFailure): ImageGenerationOutcome {
  return { ok: false, failure };
}

function isImageSize(size: unknown): size is ImageSize {
  return typeof size === "string" && (IMAGE_SIZES as readonly string[]).includes(size);
}

function isUnavailable(failure: ImageFailure): boolean {
  if (failure.reason === "timeout" || failure.reason === "network_error") return true;
  return (
    failure.reason === "http_error" &&
    failure.errorCode !== undefined &&
    UNAVAILABLE_CODES.has(failure.errorCode)
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
