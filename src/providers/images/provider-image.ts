/** What each provider's wire module gives the generator: the request to send, the image it got. */

export interface ProviderImageRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A 2xx answer read: the image's base64, or why it holds no usable image. */
export type ProviderImage =
  | { ok: true; base64: string; revisedPrompt?: string }
  | { ok: false; reason: "content_policy" | "bad_response"; message: string; providerCode?: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
