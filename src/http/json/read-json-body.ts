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
import type { IncomingMessage } from "node:http";
import { GatewayError } from "../../errors/gateway-error.js";
import { DEFAULT_JSON_SHAPE_LIMITS, type JsonShapeLimits } from "./json-shape-scanner.js";
import { type JsonScan, parseScannedJson, scanJsonChunk, startJsonScan } from "./read-scanned-json.js";

export async function readJsonBody(
  request: Request,
  maxBytes: number,
  shape: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS,
): Promise<unknown> {
  checkContentEncoding(request.headers.get("content-encoding"));
  checkDeclaredLength(request.headers.get("content-length"), maxBytes);
  if (!request.body) throw createEmptyBodyError();

  const reader = request.body.getReader();
  const scan = startJsonScan(shape);
  let refused: unknown;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (scan.total + value.byteLength > maxBytes) {
      await reader.cancel().catch(() => {});
      throw refused ?? createTooLargeError(maxBytes);
    }
    if (refused !== undefined) {
      scan.total += value.byteLength;
      continue;
    }
    try {
      scanJsonChunk(scan, value);
    } catch (error) {
      refused = error;
    }
  }
  if (refused !== undefined) throw refused;
  return parseScannedJson(scan);
}

export function readNodeJsonBody(
  incoming: IncomingMessage,
  maxBytes: number,
  shape: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS,
): Promise<unknown> {
  try {
    checkContentEncoding(incoming.headers["content-encoding"]);
    checkDeclaredLength(incoming.headers["content-length"], maxBytes);
  } catch (error) {
    return Promise.reject(error);
  }
  // The client may have left while the caller was being authenticated: no event would come.
  if (incoming.destroyed) return Promise.reject(incoming.errored ?? createClientGoneError());
  return new Promise((resolve, reject) => {
    const scan: JsonScan = startJsonScan(shape);
    const settle = (outcome: () => void) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      outcome();
    };
    // A body whose shape broke a bound: nothing more is scanned or kept, the rest is only counted.
    let refused: unknown;
    const onData = (chunk: Buffer) => {
      if (scan.total + chunk.byteLength > maxBytes) {
        // Stop reading; once the response is sent the rest is drained or the connection dropped
        // (the router, create-app.ts).
        incoming.pause();
        settle(() => reject(refused ?? createTooLargeError(maxBytes)));
        return;
      }
      if (refused !== undefined) {
        scan.total += chunk.byteLength;
        return;
      }
      try {
        // The shape is checked as the bytes arrive, before anything parses them.
        scanJsonChunk(scan, chunk);
      } catch (error) {
        // Refused; the answer waits for the end of the body, as clients expect it after sending.
        refused = error;
      }
    };
    const onEnd = () =>
      settle(() => (refused === undefined ? parseScannedJson(scan).then(resolve, reject) : reject(refused)));
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

function createClientGoneError(): Error {
  return new Error("Client closed the connection before sending the whole body");
}

function createEmptyBodyError(): GatewayError {
  return GatewayError.invalidRequest("Request body is empty; send a JSON object", null);
}

function createTooLargeError(maxBytes: number): GatewayError {
  return new GatewayError("payload_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}
