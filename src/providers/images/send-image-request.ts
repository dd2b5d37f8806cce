/**
 * One POST to an image provider under one deadline (connect to last byte) and the caller's
 * signal. Answers the status and the body text (2xx bodies up to a cap, error bodies up to 64 KiB
 * for classification) or a typed failure: `timeout`, `aborted`, `network_error`, or
 * `bad_response` for a body over the cap. Never rejects. Redirects are not followed: a provider
 * URL comes from configuration, and following one would send the key elsewhere.
 */
import { type Dispatcher, request } from "undici";
import { mapNetworkError } from "../shared/upstream-failure.js";
import type { ImageFailure } from "./image-generation.js";

export interface ImageHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
  dispatcher: Dispatcher;
}

export type ImageHttpResult =
  | { ok: true; status: number; headers: Record<string, string | string[] | undefined>; bodyText: string }
  | { ok: false; failure: ImageFailure };

/** A 4096×4096 PNG in base64 fits; a provider that sends more is not answering an image request. */
export const MAX_IMAGE_RESPONSE_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export async function sendImageRequest(input: ImageHttpRequest): Promise<ImageHttpResult> {
  if (input.signal?.aborted) return aborted();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), input.timeoutMs);
  const signal = input.signal ? AbortSignal.any([input.signal, deadline.signal]) : deadline.signal;
  const stopped = (): ImageHttpResult | undefined => {
    if (input.signal?.aborted) return aborted();
    if (deadline.signal.aborted) {
      return {
        ok: false,
        failure: {
          reason: "timeout",
          message: `The image provider did not answer within ${input.timeoutMs} ms`,
        },
      };
    }
    return undefined;
  };
  try {
    const response = await request(input.url, {
      method: "POST",
      headers: input.headers,
      body: input.body,
      signal,
      dispatcher: input.dispatcher,
      headersTimeout: input.timeoutMs,
      bodyTimeout: input.timeoutMs,
    });
    const success = response.statusCode >= 200 && response.statusCode < 300;
    const limit = success ? MAX_IMAGE_RESPONSE_BYTES : MAX_ERROR_BODY_BYTES;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > limit) {
        response.body.destroy();
        if (success) {
          return {
            ok: false,
            failure: {
              reason: "bad_response",
              message: `The image provider's answer exceeded ${MAX_IMAGE_RESPONSE_BYTES} bytes`,
              status: response.statusCode,
            },
          };
        }
        break;
      }
      chunks.push(buffer);
    }
    return {
      ok: true,
      status: response.statusCode,
      headers: response.headers,
      bodyText: Buffer.concat(chunks).toString("utf8"),
    };
  } catch (error) {
    const early = stopped();
    if (early) return early;
    const classified = mapNetworkError(error);
    return {
      ok: false,
      failure: {
        reason: classified.code === "provider_timeout" ? "timeout" : "network_error",
        message: classified.message.replace("upstream provider", "image provider"),
        errorCode: classified.code,
      },
    };
  } finally {
    clearTimeout(timer);
  }
}

function aborted(): ImageHttpResult {
  return { ok: false, failure: { reason: "aborted", message: "The image generation was cancelled" } };
}
