/**
 * Reads a JSON request body with a size cap, counting bytes as they arrive so an oversized body is
 * refused without being buffered whole (a lying or absent Content-Length does not help).
 *
 * Two sources, same rules and errors: the Node request (the generation endpoints and count_tokens:
 * no web ReadableStream per request), and a web Request (routes that are also exercised through
 * `app.request` in unit tests).
 *
 * The body must be UTF-8 JSON (RFC 8259) sent as is: a compressed body (any Content-Encoding but
 * `identity`) is refused before it is read, so no decompression ratio can turn a body under the cap
 * into gigabytes, and bytes that are not UTF-8 are refused rather than silently replaced by U+FFFD.
 * Content-Type is not checked: JSON is the only body these endpoints take, and `curl -d` without
 * `-H` labels it form data.
 */
import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import { yieldToEventLoop } from "../engine/yield-to-event-loop.js";
import { GatewayError } from "../errors/gateway-error.js";
import { checkJsonDepth } from "./check-json-depth.js";

/** Bodies from this size on are joined, decoded, parsed and checked in separate turns of the event loop. */
const LARGE_BODY_BYTES = 256 * 1024;

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  checkContentEncoding(request.headers.get("content-encoding"));
  checkDeclaredLength(request.headers.get("content-length"), maxBytes);
  if (!request.body) throw createEmptyBodyError();

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw createTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  const body = parseJsonBody(Buffer.concat(chunks, total));
  checkJsonDepth(body);
  return body;
}

export function readNodeJsonBody(incoming: IncomingMessage, maxBytes: number): Promise<unknown> {
  try {
    checkContentEncoding(incoming.headers["content-encoding"]);
    checkDeclaredLength(incoming.headers["content-length"], maxBytes);
  } catch (error) {
    return Promise.reject(error);
  }
  // The client may have left while the caller was being authenticated: no event would come.
  if (incoming.destroyed) return Promise.reject(incoming.errored ?? createClientGoneError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const settle = (outcome: () => void) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        // Stop reading; once the response is sent the rest is drained or the connection dropped
        // (the router, create-app.ts).
        incoming.pause();
        settle(() => reject(createTooLargeError(maxBytes)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () =>
      settle(() => {
        if (total >= LARGE_BODY_BYTES) {
          parseLargeBody(chunks, total).then(resolve, reject);
          return;
        }
        try {
          const body = parseJsonBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
          checkJsonDepth(body);
          resolve(body);
        } catch (error) {
          reject(error);
        }
      });
    const onError = (error: Error) => settle(() => reject(error));
    const onClose = () => settle(() => reject(createClientGoneError()));
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

function checkContentEncoding(header: string | null | undefined): void {
  if (header === undefined || header === null) return;
  const encoding = header.trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return;
  throw GatewayError.invalidRequest(
    `Content-Encoding "${header.slice(0, 40)}" is not supported: send the request body uncompressed`,
    null,
  );
}

function checkDeclaredLength(header: string | null | undefined, maxBytes: number): void {
  const declared = Number(header ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw createTooLargeError(maxBytes);
}

function parseJsonBody(bytes: Buffer): unknown {
  return parseJsonText(decodeUtf8(bytes));
}

/**
 * A body of megabytes, read in steps with other requests' I/O let in between: joining its chunks,
 * decoding them and parsing the text each copy the whole body, and on a machine where fresh memory
 * is slow to touch each copy of ten megabytes can take tens of milliseconds.
 */
async function parseLargeBody(chunks: Buffer[], total: number): Promise<unknown> {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  await yieldToEventLoop();
  const text = decodeUtf8(bytes);
  await yieldToEventLoop();
  const body = parseJsonText(text);
  await yieldToEventLoop();
  checkJsonDepth(body);
  return body;
}

function decodeUtf8(bytes: Buffer): string {
  if (bytes.byteLength === 0) throw createEmptyBodyError();
  if (!isUtf8(bytes)) throw GatewayError.invalidRequest("Request body is not valid UTF-8", null);
  return bytes.toString("utf8");
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw GatewayError.invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, null);
  }
}

function createClientGoneError(): Error {
  return new Error("Client closed the connection before sending the whole body");
}

function createEmptyBodyError(): GatewayError {
  return GatewayError.invalidRequest("Request body is empty; send a JSON object", null);
}

function createTooLargeError(maxBytes: number): GatewayError {
  return new GatewayError("payload_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}
