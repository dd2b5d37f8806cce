/**
 * The `openai-responses` provider adapter: OpenAI's Responses API (`POST {baseUrl}/responses`),
 * called statelessly (`store: false`, full input every turn, reasoning carried as encrypted
 * content in the canonical reasoning parts' provider state).
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
import { convertResultToParts } from "../openai-compatible/convert-result-to-parts.js";
import type { ProviderAdapter, UpstreamCall } from "../provider-adapter.js";
import { readSseEvents } from "../sse-reader.js";
import { buildResponsesRequest } from "./build-request.js";
import { parseResponsesResponse } from "./parse-response.js";
import { parseResponsesStream } from "./parse-stream.js";
import { RESPONSES_PROVIDER_KIND } from "./provider-kind.js";

export interface OpenAiResponsesAdapterOptions {
  /** Defaults to the process-wide shared client (one keep-alive pool per upstream origin). */
  httpClient?: UpstreamHttpClient;
}

export function createOpenAiResponsesAdapter(options: OpenAiResponsesAdapterOptions = {}): ProviderAdapter {
  const getClient = () => options.httpClient ?? getSharedUpstreamHttpClient();
  return {
    kind: RESPONSES_PROVIDER_KIND,
    generate: (call) => generateResponse(getClient(), call),
    stream: (call) => streamResponse(getClient(), call),
  };
}

async function generateResponse(client: UpstreamHttpClient, call: UpstreamCall): Promise<CanonicalResult> {
  const response = await sendResponsesRequest(client, call, false);
  return readJsonResponse(response, call);
}

/**
 * Errors before the first part are thrown (the HTTP status errors always are); after it they end
 * the stream as an `error` part. An abort ends the stream quietly: the caller asked for it.
 */
async function* streamResponse(
  client: UpstreamHttpClient,
  call: UpstreamCall,
): AsyncGenerator<CanonicalStreamPart> {
  let response: UpstreamHttpResponse;
  try {
    response = await sendResponsesRequest(client, call, true);
  } catch (error) {
    if (call.signal.aborted) return;
    throw error;
  }
  let partCount = 0;
  try {
    // A server that ignores `stream: true` answers with one JSON response.
    const parts = isJsonResponse(response)
      ? convertResultToParts(await readJsonResponse(response, call))
      : parseResponsesStream(readSseEvents(response.body), { upstreamModel: call.upstreamModel });
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
    // Frees the socket when the consumer stops early, the stream failed, or after the terminal event.
    response.body.destroy();
  }
}

function sendResponsesRequest(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  stream: boolean,
): Promise<UpstreamHttpResponse> {
  // Built before sending: a request the format cannot express fails without an upstream call.
  const request = buildResponsesRequest(call, { stream });
  return client.send({
    url: request.url,
    method: "POST",
    headers: request.headers,
    body: JSON.stringify(request.body),
    timeouts: call.provider.timeouts,
    signal: call.signal,
  });
}

async function readJsonResponse(
  response: UpstreamHttpResponse,
  call: UpstreamCall,
): Promise<CanonicalResult> {
  const text = await readUpstreamText(response.body, { signal: call.signal });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new GatewayError("provider_unavailable", "The upstream provider returned a body that is not JSON");
  }
  return parseResponsesResponse(json, { upstreamModel: call.upstreamModel });
}

function isJsonResponse(response: UpstreamHttpResponse): boolean {
  const contentType = response.headers["content-type"];
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/json\b/i.test(value);
}
