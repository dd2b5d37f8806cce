/**
 * The part every HTTP provider adapter shares: send the built request, read a JSON answer or an SSE
 * stream, and keep the error contract of ProviderAdapter — errors before the first part are thrown
 * (HTTP status errors always are), errors after it end the stream as an `error` part, an abort ends
 * it quietly. An adapter supplies only what differs: how to build the request and parse the answer.
 */
import type { CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import type { ProviderAdapter, UpstreamCall } from "../provider-adapter.js";
import { convertResultToParts } from "./convert-result-to-parts.js";
import {
  getSharedUpstreamHttpClient,
  mapNetworkError,
  readUpstreamText,
  type UpstreamHttpClient,
  type UpstreamHttpRequest,
  type UpstreamHttpResponse,
  type UpstreamTextResponse,
} from "./http-client.js";
import { flattenBatches } from "./part-batches.js";
import { selectHeadDeadlineMs } from "./select-head-deadline.js";
import { readSseEventBatches, type SseEvent } from "./sse-reader.js";
import { serialiseBodyInSteps } from "./stringify-in-steps.js";

export interface BuiltUpstreamRequest<Context> {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Whatever the parsers need to know about how the request was built. */
  context: Context;
}

export interface HttpAdapterSpec<Context> {
  kind: string;
  /** What the upstream bills for input (ProviderAdapter.inputRules). */
  inputRules: UpstreamInputRules;
  /** The server tools the upstream can run itself (ProviderAdapter.nativeServerTools). */
  nativeServerTools?: ProviderAdapter["nativeServerTools"];
  /** The upstream reads PDF files itself (ProviderAdapter.readsPdf). */
  readsPdf: boolean;
  /** What the upstream goes without (ProviderAdapter.listDropped). */
  listDropped(call: UpstreamCall): string[];
  /** Throws GatewayError (before any I/O) for what the upstream API cannot express. */
  buildRequest(call: UpstreamCall, stream: boolean): BuiltUpstreamRequest<Context>;
  parseJson(json: unknown, call: UpstreamCall, context: Context): CanonicalResult;
  /** The parts of each batch of events (the events of one network chunk), a batch per batch. */
  parseStream(
    batches: AsyncIterable<readonly SseEvent[]>,
    call: UpstreamCall,
    context: Context,
  ): AsyncIterable<CanonicalStreamPart[]>;
  /**
   * Parts for a stream request the upstream answered with one JSON body (a host or relay that
   * ignores `stream: true`). Default: the parsed result replayed as parts.
   */
  convertJsonToParts?(json: unknown, call: UpstreamCall, context: Context): CanonicalStreamPart[];
  /** A provider-specific second look at a failed send (e.g. Gemini's 400 for a bad key). */
  refineSendError?(error: unknown): unknown;
}

export interface HttpAdapterOptions {
  /** Defaults to the process-wide shared client (one keep-alive pool per upstream origin). */
  httpClient?: UpstreamHttpClient;
}

export function createHttpAdapter<Context>(
  spec: HttpAdapterSpec<Context>,
  options: HttpAdapterOptions = {},
): ProviderAdapter {
  const getClient = () => options.httpClient ?? getSharedUpstreamHttpClient();
  return {
    kind: spec.kind,
    inputRules: spec.inputRules,
    ...(spec.nativeServerTools === undefined ? {} : { nativeServerTools: spec.nativeServerTools }),
    readsPdf: spec.readsPdf,
    listDropped: (call) => spec.listDropped(call),
    async generate(call) {
      const request = spec.buildRequest(call, false);
      const response = await sendForText(spec, getClient(), call, request);
      return spec.parseJson(parseJsonBody(response.text), call, request.context);
    },
    stream: (call) => flattenBatches(streamBatches(spec, getClient(), call)),
  };
}

/** The stream's parts, a batch per network chunk (see part-batches.ts). */
async function* streamBatches<Context>(
  spec: HttpAdapterSpec<Context>,
  client: UpstreamHttpClient,
  call: UpstreamCall,
): AsyncGenerator<CanonicalStreamPart[]> {
  const request = spec.buildRequest(call, true);
  let response: UpstreamHttpResponse;
  try {
    response = await send(spec, client, call, request);
  } catch (error) {
    if (call.signal.aborted) return;
    throw error;
  }
  let partCount = 0;
  let finished = false;
  try {
    const batches = isJsonResponse(response)
      ? [convertJson(spec, await readJson(response, call), call, request.context)]
      : spec.parseStream(readSseEventBatches(response.body), call, request.context);
    for await (const parts of batches) {
      if (call.signal.aborted) return;
      partCount += parts.length;
      if (parts.some((part) => part.type === "finish")) finished = true;
      yield parts;
    }
  } catch (error) {
    if (call.signal.aborted) return;
    const failure = mapNetworkError(error);
    if (partCount === 0) throw failure;
    // The classified error itself: the run and the writer use it as it is (readStreamError).
    yield [{ type: "error", error: failure }];
  } finally {
    // The error a cut body emits has no reader left: it must not become an unhandled 'error'.
    response.body.on("error", ignoreError);
    if (finished && !call.signal.aborted) releaseAfterEnd(response.body);
    // Cuts the upstream (and frees the socket) when the consumer stopped early or the stream failed.
    else response.body.destroy();
  }
}

function ignoreError(): void {}

/** How long a finished stream's body may take to deliver its end before its connection is cut. */
const RELEASE_GRACE_MS = 1_000;

/**
 * A finished stream (its `[DONE]` or last event seen) usually has only the end of its body left, in
 * the same or the next network chunk. Reading that to the end returns the connection to the pool;
 * destroying the body before its end would abort the request and close the connection (undici), so
 * the next request to the provider would pay a new TCP/TLS handshake, and it builds an error per
 * stream besides.
 */
function releaseAfterEnd(body: UpstreamHttpResponse["body"]): void {
  if (body.readableEnded || body.destroyed) return;
  const timer = setTimeout(() => body.destroy(), RELEASE_GRACE_MS);
  timer.unref();
  const done = () => clearTimeout(timer);
  body.once("end", done);
  body.once("close", done);
  body.resume();
}

function convertJson<Context>(
  spec: HttpAdapterSpec<Context>,
  json: unknown,
  call: UpstreamCall,
  context: Context,
): CanonicalStreamPart[] {
  return spec.convertJsonToParts
    ? spec.convertJsonToParts(json, call, context)
    : convertResultToParts(spec.parseJson(json, call, context));
}

function send<Context>(
  spec: HttpAdapterSpec<Context>,
  client: UpstreamHttpClient,
  call: UpstreamCall,
  request: BuiltUpstreamRequest<Context>,
): Promise<UpstreamHttpResponse> {
  return withBodyEncoded(call, request, true, (ready) => refiningErrors(spec, client.send(ready)));
}

/** A non-streamed call: the whole answer read by the client without a body stream. */
function sendForText<Context>(
  spec: HttpAdapterSpec<Context>,
  client: UpstreamHttpClient,
  call: UpstreamCall,
  request: BuiltUpstreamRequest<Context>,
): Promise<UpstreamTextResponse> {
  return withBodyEncoded(call, request, false, (ready) => refiningErrors(spec, client.sendForText(ready)));
}

/**
 * Runs `sendIt` once the body is serialised: as is for an ordinary body, in steps for a body of
 * megabytes (stringify-in-steps.ts: one JSON.stringify, or undici handed a long string, would
 * copy it all in one turn).
 */
async function withBodyEncoded<Context, T>(
  call: UpstreamCall,
  request: BuiltUpstreamRequest<Context>,
  stream: boolean,
  sendIt: (ready: UpstreamHttpRequest) => Promise<T>,
): Promise<T> {
  return sendIt(toHttpRequest(call, request, stream, await serialiseBodyInSteps(request.body)));
}

/**
 * The adapter's second look at a failed call. Body-read failures pass through it too; refiners only
 * rewrite status errors, which a body read never produces.
 */
async function refiningErrors<Context, T>(spec: HttpAdapterSpec<Context>, sent: Promise<T>): Promise<T> {
  try {
    return await sent;
  } catch (error) {
    throw spec.refineSendError ? spec.refineSendError(error) : error;
  }
}

function toHttpRequest<Context>(
  call: UpstreamCall,
  request: BuiltUpstreamRequest<Context>,
  stream: boolean,
  body: string | Buffer,
): UpstreamHttpRequest {
  const { timeouts } = call.provider;
  return {
    url: request.url,
    method: "POST",
    headers:
      call.traceHeaders === undefined
        ? request.headers
        : Object.assign({ ...request.headers }, call.traceHeaders),
    body,
    timeouts: {
      connectMs: timeouts.connectMs,
      headMs: selectHeadDeadlineMs(timeouts, { stream, anotherRouteWaits: call.anotherRouteWaits === true }),
      idleMs: timeouts.idleMs,
    },
    signal: call.signal,
  };
}

async function readJson(response: UpstreamHttpResponse, call: UpstreamCall): Promise<unknown> {
  return parseJsonBody(await readUpstreamText(response.body, { signal: call.signal }));
}

function parseJsonBody(text: string): unknown {
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
