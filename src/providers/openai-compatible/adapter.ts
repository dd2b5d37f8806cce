/**
 * The Chat Completions provider adapter (`POST {baseUrl}/chat/completions`). One implementation
 * serves every kind that speaks the format; what differs is data: the {@link ChatDialect} given to
 * {@link createChatCompletionsAdapter} and each provider's `quirks`.
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
import { buildChatCompletionsRequest } from "./build-request.js";
import { type ChatDialect, OPENAI_COMPATIBLE_DIALECT } from "./chat-dialect.js";
import { convertResultToParts } from "./convert-result-to-parts.js";
import { parseChatCompletionsResponse } from "./parse-response.js";
import { parseChatCompletionsStream } from "./parse-stream.js";

export interface OpenAiCompatibleAdapterOptions {
  /** Defaults to the process-wide shared client (one keep-alive pool per upstream origin). */
  httpClient?: UpstreamHttpClient;
}

/** Kind `openai-compatible`: any host that speaks OpenAI Chat Completions. */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleAdapterOptions = {}): ProviderAdapter {
  return createChatCompletionsAdapter(OPENAI_COMPATIBLE_DIALECT, options);
}

/** A Chat Completions adapter registered under `dialect.kind` and following its rules. */
export function createChatCompletionsAdapter(
  dialect: ChatDialect,
  options: OpenAiCompatibleAdapterOptions = {},
): ProviderAdapter {
  const getClient = () => options.httpClient ?? getSharedUpstreamHttpClient();
  return {
    kind: dialect.kind,
    generate: (call) => generateChatCompletion(getClient(), call, dialect),
    stream: (call) => streamChatCompletion(getClient(), call, dialect),
  };
}

async function generateChatCompletion(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  dialect: ChatDialect,
): Promise<CanonicalResult> {
  const response = await sendChatCompletionsRequest(client, call, { stream: false, dialect });
  return readJsonCompletion(response, call);
}

/**
 * Errors before the first part are thrown (the HTTP status errors always are); after it they end
 * the stream as an `error` part. An abort ends the stream quietly: the caller asked for it.
 */
async function* streamChatCompletion(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  dialect: ChatDialect,
): AsyncGenerator<CanonicalStreamPart> {
  let response: UpstreamHttpResponse;
  try {
    response = await sendChatCompletionsRequest(client, call, { stream: true, dialect });
  } catch (error) {
    if (call.signal.aborted) return;
    throw error;
  }
  let partCount = 0;
  try {
    // A host that ignores `stream: true` answers with one JSON completion.
    const parts = isJsonResponse(response)
      ? convertResultToParts(await readJsonCompletion(response, call))
      : parseChatCompletionsStream(readSseEvents(response.body));
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
    // Frees the socket when the consumer stops early, the stream failed, or after `[DONE]`.
    response.body.destroy();
  }
}

function sendChatCompletionsRequest(
  client: UpstreamHttpClient,
  call: UpstreamCall,
  options: { stream: boolean; dialect: ChatDialect },
): Promise<UpstreamHttpResponse> {
  const request = buildChatCompletionsRequest(call, options);
  return client.send({
    url: request.url,
    method: "POST",
    headers: request.headers,
    body: JSON.stringify(request.body),
    timeouts: call.provider.timeouts,
    signal: call.signal,
  });
}

async function readJsonCompletion(
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
  return parseChatCompletionsResponse(json);
}

function isJsonResponse(response: UpstreamHttpResponse): boolean {
  const contentType = response.headers["content-type"];
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/json\b/i.test(value);
}
