/**
 * The `anthropic` provider adapter: Anthropic's Messages API (`POST {baseUrl}/messages`, with
 * `baseUrl` like `https://api.anthropic.com/v1`), and relays that speak it.
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
import { type AnthropicHttpRequest, buildAnthropicRequest } from "./build-request.js";
import { convertResultToParts } from "./convert-result-to-parts.js";
import { type AnthropicParseContext, parseAnthropicResponse } from "./parse-response.js";
import { parseAnthropicStream } from "./parse-stream.js";

export interface AnthropicAdapterOptions {
  /** Defaults to the process-wide shared client (one keep-alive pool per upstream origin). */
  httpClient?: UpstreamHttpClient;
}

export function createAnthropicAdapter(options: AnthropicAdapterOptions = {}): ProviderAdapter {
  const getClient = () => options.httpClient ?? getSharedUpstreamHttpClient();
  return {
    kind: "anthropic",
    generate: (call) => generateMessage(getClient(), call),
    stream: (call) => streamMessage(getClient(), call),
  };
}

async function generateMessage(client: UpstreamHttpClient, call: UpstreamCall): Promise<CanonicalResult> {
  const request = buildAnthropicRequest(call, { stream: false });
  const response = await sendMessagesRequest(client, call, request);
  return readJsonMessage(response, call, toParseContext(call, request));
}

/**
 * Errors before the first part are thrown (the HTTP status errors and request-building refusals
 * always are); after it they end the stream as an `error` part. An abort ends the stream quietly:
 * the caller asked for it.
 */
async function* streamMessage(
  client: UpstreamHttpClient,
  call: UpstreamCall,
): AsyncGenerator<CanonicalStreamPart> {
  const request = buildAnthropicRequest(call, { stream: true });
  const context = toParseContext(call, request);
  let response: UpstreamHttpResponse;
  try {
    response = await sendMessagesRequest(client, call, request);
  } catch (error) {
    if (call.signal.aborted) return;
    throw error;
  }
  let partCount = 0;
  try {
    // A relay that ignores `stream: true` answers with one JSON message.
    const parts = isJsonResponse(response)
      ? convertResultToParts(await readJsonMessage(response, call, context))
      : parseAnthropicStream(readSseEvents(response.body), context);
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
    // Frees the socket when the consumer stops early, the stream failed, or after message_stop.
    response.body.destroy();
  }
}

function sendMessagesRequest(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  request: AnthropicHttpRequest,
): Promise<UpstreamHttpResponse> {
  return client.send({
    url: request.url,
    method: "POST",
    headers: request.headers,
    body: JSON.stringify(request.body),
    timeouts: call.provider.timeouts,
    signal: call.signal,
  });
}

async function readJsonMessage(
  response: UpstreamHttpResponse,
  call: UpstreamCall,
  context: AnthropicParseContext,
): Promise<CanonicalResult> {
  const text = await readUpstreamText(response.body, { signal: call.signal });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new GatewayError("provider_unavailable", "The upstream provider returned a body that is not JSON");
  }
  return parseAnthropicResponse(json, context);
}

function toParseContext(call: UpstreamCall, request: AnthropicHttpRequest): AnthropicParseContext {
  return {
    upstreamModel: call.upstreamModel,
    ...(request.jsonToolName === undefined ? {} : { jsonToolName: request.jsonToolName }),
  };
}

function isJsonResponse(response: UpstreamHttpResponse): boolean {
  const contentType = response.headers["content-type"];
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/json\b/i.test(value);
}
