/**
 * Reads a whole upstream answer into a string straight from undici's dispatch callbacks. This is
 * the non-streamed path (`UpstreamHttpClient.sendForText`): `Pool.request()` would build an
 * AsyncResource handler, a `Readable` body and undici's own abort listeners per request, and
 * reading that body with `for await` adds Node's async iterator, end-of-stream and close events —
 * at saturation more CPU than the rest of a bare proxy's request. Here the chunks go into an
 * array and the promise settles once, from the callbacks.
 *
 * The guarantees are those of `send()` + `readUpstreamText()`: the size cap, undici's
 * `headersTimeout`/`bodyTimeout` deadlines (dispatch options), the caller's abort (one listener,
 * removed when the promise settles), non-2xx classification from at most `maxErrorBodyBytes` of
 * the body, network errors mapped to the taxonomy. A body read to its end leaves the connection
 * in the pool; an abandoned one (abort, cap) is aborted, which closes its socket.
 */
import type { Dispatcher } from "undici";
import { GatewayError } from "../../errors/gateway-error.js";
import { classifyUpstreamError, type UpstreamHeaders } from "./classify-upstream-error.js";
import { startLongStep } from "./long-steps.js";
import { toUpstreamFailure } from "./upstream-failure.js";

/** From this many bytes on, a body is decoded in a turn of the event loop of its own. */
const LONG_BODY_BYTES = 256 * 1024;

export interface UpstreamTextResponse {
  status: number;
  headers: UpstreamHeaders;
  /** The whole body, decoded as UTF-8. */
  text: string;
}

export interface TextResponseLimits {
  /** Cap for a 2xx body; beyond it the request fails with `provider_unavailable`. */
  maxBytes: number;
  /** How much of a non-2xx body is read for classification; the rest is dropped. */
  maxErrorBodyBytes: number;
}

/**
 * Dispatches `options` on `dispatcher` and resolves with the 2xx answer as text. Rejects like
 * `UpstreamHttpClient.send` (classified GatewayError, mapped network failure, `signal.reason`).
 */
export function dispatchForText(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  limits: TextResponseLimits,
  signal?: AbortSignal,
): Promise<UpstreamTextResponse> {
  // An already aborted call never reaches the upstream (undici would queue it and abort it on
  // its socket, closing that connection).
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new TextResponseCollector(resolve, reject, limits, signal));
  });
}

class TextResponseCollector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: UpstreamHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  /** Set once the promise is settled; later callbacks only wind the request down. */
  private settled = false;

  constructor(
    private readonly resolve: (response: UpstreamTextResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly limits: TextResponseLimits,
    private readonly signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener("abort", this.onAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted while the request waited in the pool's queue: cancel it before it is written.
    if (this.settled) controller.abort(toError(this.signal?.reason));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: UpstreamHeaders,
  ): void {
    // 1xx informational heads precede the real one.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.isSuccess()) {
      if (this.size > this.limits.maxBytes) {
        const error = new GatewayError(
          "provider_unavailable",
          "The upstream response exceeded the size limit",
        );
        this.fail(error);
        controller.abort(error);
      }
    } else if (this.size >= this.limits.maxErrorBodyBytes) {
      // Enough to classify; the rest of an error body is not worth keeping the connection for.
      const bodyText = this.takeText().subarray(0, this.limits.maxErrorBodyBytes).toString("utf8");
      this.fail(classifyUpstreamError({ status: this.status, headers: this.headers, bodyText }));
      controller.abort(new Error("The upstream error body exceeded what is read of it"));
    }
  }

  onResponseEnd(): void {
    if (this.settled) return;
    // Answers of megabytes that end in the same poll of the event loop would be decoded, and then
    // parsed by the caller, one after the other in it: a long one waits for a turn of its own
    // (its chunks stay Buffers meanwhile, outside V8's heap; the caller may abort meanwhile).
    if (this.size >= LONG_BODY_BYTES) void startLongStep().then(this.finish);
    else this.finish();
  }

  private readonly finish = (): void => {
    if (this.settled) return;
    const text = this.takeText().toString("utf8");
    if (this.isSuccess()) {
      this.settled = true;
      this.removeAbortListener();
      this.resolve({ status: this.status, headers: this.headers, text });
    } else {
      this.fail(classifyUpstreamError({ status: this.status, headers: this.headers, bodyText: text }));
    }
  };

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.settled) return;
    if (this.status !== 0 && !this.isSuccess()) {
      // A truncated or stalled error body still classifies by status and headers.
      this.fail(classifyUpstreamError({ status: this.status, headers: this.headers, bodyText: "" }));
    } else {
      this.fail(toUpstreamFailure(error, this.signal));
    }
  }

  /** The caller went away: reject with its reason at once and cut the upstream. */
  private readonly onAbort = (): void => {
    this.fail(this.signal?.reason);
    // Before `onRequestStart` there is nothing to cut yet; it aborts the request when it comes.
    this.controller?.abort(toError(this.signal?.reason));
  };

  private isSuccess(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  private takeText(): Buffer {
    const { chunks } = this;
    this.chunks = [];
    // A small answer arrives in one chunk: decode it without copying.
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.size);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.removeAbortListener();
    this.reject(error);
  }

  private removeAbortListener(): void {
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** undici's abort wants an Error; an AbortSignal's reason may be anything. */
function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error("The request was aborted", { cause: reason });
}
