/**
 * The contract of an ingress format (chat completions, responses, messages): decode a wire body to
 * the canonical request, encode a canonical result or stream back to the wire.
 */
import type { CanonicalRequest, CanonicalResult, CanonicalStreamPart } from "../canonical/index.js";
import type { IngressFormatName } from "../canonical/ingress-format-name.js";
import type { Settlement } from "../canonical/settlement.js";
import type { GatewayError } from "../errors/gateway-error.js";

export interface EncodeContext {
  requestId: string;
  /** The catalog slug the caller asked for (echoed as `model`). */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** The decoded request, for formats whose responses echo request settings (Responses). */
  request?: CanonicalRequest;
  /**
   * The prompt's tokens as metering estimates them, for formats that show input usage before the
   * upstream reports it (the Messages stream's `message_start`); a function, since counting costs
   * and most streams never need it.
   */
  estimateInputTokens?: () => number;
}

export interface StreamEncoder {
  /** SSE frames for one canonical part (possibly the empty string). */
  push(part: CanonicalStreamPart): string;
  /** Frames after the upstream finished and the cost is known (chat: usage chunk + `[DONE]`). */
  finish(settlement: Settlement): string;
  /**
   * Frames reporting an error after the stream started; nothing may follow them. `settlement`:
   * what the generation is billed, shown where the format has a place for usage before or in its
   * error (the client sees what it pays for a stream that failed mid-way).
   */
  fail(error: GatewayError, settlement?: Settlement): string;
  /** A keep-alive frame (SSE comment, or the format's ping event). */
  keepAlive(): string;
}

/**
 * Read access to request headers: `get` as the web `Headers` has it (case-insensitive, repeated
 * lines joined with ", ", null when absent). Web `Headers` satisfy it, and so does the reader over
 * a Node request's raw headers that the generation endpoints use (http/node-header-reader.ts).
 */
export interface HeaderReader {
  get(name: string): string | null;
}

export interface IngressFormat {
  readonly name: IngressFormatName;
  /**
   * Throws GatewayError `invalid_request` with `param` naming the offending field. `headers` are
   * the request's headers, for formats that carry request options there (`anthropic-beta`).
   */
  decode(body: unknown, headers?: HeaderReader): CanonicalRequest;
  encodeResult(result: CanonicalResult, settlement: Settlement, context: EncodeContext): unknown;
  createStreamEncoder(context: EncodeContext): StreamEncoder;
  /** The error body in this format's envelope. */
  encodeError(error: GatewayError, requestId: string): unknown;
}
