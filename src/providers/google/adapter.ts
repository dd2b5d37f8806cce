/**
 * The `google` provider adapter: the Gemini API (`POST {baseUrl}/models/{model}:generateContent`
 * and `:streamGenerateContent?alt=sse`, baseUrl like https://generativelanguage.googleapis.com/v1beta).
 */
import type { CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { toUpstreamErrorInfo } from "../classify-upstream-error.js";
import {
  getSharedUpstreamHttpClient,
  mapNetworkError,
  readUpstreamText,
  type UpstreamHttpClient,
  type UpstreamHttpResponse,
} from "../http-client.js";
import type { ProviderAdapter, UpstreamCall } from "../provider-adapter.js";
import { readSseEvents } from "../sse-reader.js";
import { buildGenerateContentRequest } from "./build-request.js";
import { GOOGLE_PROVIDER_KIND } from "./google-provider-kind.js";
import { convertJsonBodyToParts, parseGenerateContentResponse } from "./parse-response.js";
import { parseGenerateContentStream } from "./parse-stream.js";
import { refineGoogleError } from "./refine-google-error.js";

export interface GoogleAdapterOptions {
  /** Defaults to the process-wide shared client (one keep-alive pool per upstream origin). */
  httpClient?: UpstreamHttpClient;
}

export function createGoogleAdapter(options: GoogleAdapterOptions = {}): ProviderAdapter {
  const getClient = () => options.httpClient ?? getSharedUpstreamHttpClient();
  return {
    kind: GOOGLE_PROVIDER_KIND,
    generate: (call) => generateContent(getClient(), call),
    stream: (call) => streamGenerateContent(getClient(), call),
  };
}

async function generateContent(client: UpstreamHttpClient, call: UpstreamCall): Promise<CanonicalResult> {
  const response = await sendGenerateContentRequest(client, call, false);
  const json = await readJsonBody(response, call);
  return parseGenerateContentResponse(json, { upstreamModel: call.upstreamModel });
}

/**
 * Errors before the first part are thrown (HTTP status errors always are); after it they end the
 * stream as an `error` part. An abort ends the stream quietly: the caller asked for it.
 */
async function* streamGenerateContent(
  client: UpstreamHttpClient,
  call: UpstreamCall,
): AsyncGenerator<CanonicalStreamPart> {
  let response: UpstreamHttpResponse;
  try {
    response = await sendGenerateContentRequest(client, call, true);
  } catch (error) {
    if (call.signal.aborted) return;
    throw error;
  }
  const parserOptions = { upstreamModel: call.upstreamModel };
  let partCount = 0;
  try {
    const parts = isJsonResponse(response)
      ? convertJsonBodyToParts(await readJsonBody(response, call), parserOptions)
      : parseGenerateContentStream(readSseEvents(response.body), parserOptions);
    for await (const part of parts) {
      if (call.signal.aborted) return;
      partCount += 1;
      yield part;
    }
  } catch (error) {
    if (call.signal.aborted) return;
    const failure = mapNetworkError(error);
    if (partCount === 0) throw failure;
    yield { type: "error", error: toUpstreamErrorInfo(failure) };
  } finally {
    // Frees the socket when the consumer stops early or the stream failed.
    response.body.destroy();
  }
}

async function sendGenerateContentRequest(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  stream: boolean,
): Promise<UpstreamHttpResponse> {
  const request = buildGenerateContentRequest(call, { stream });
  try {
    return await client.send({
      url: request.url,
      method: "POST",
      headers: request.headers,
      body: JSON.stringify(request.body),
      timeouts: call.provider.timeouts,
      signal: call.signal,
    });
  } catch (error) {
    throw refineGoogleError(error);
  }
}

async function readJsonBody(response: UpstreamHttpResponse, call: UpstreamCall): Promise<unknown> {
  const text = await readUpstreamText(response.body, { signal: call.signal });
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError("provider_unavailable", "The upstream provider returned a body that is not JSON");
  }
}

function isJsonResponse(response: UpstreamHttpResponse): boolean {
  const contentType = response.headers["content-type"];
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/json\b/i.test(value);
}
