/**
 * Reads a JSON request body with a size cap, counting bytes as they arrive so an oversized body is
 * refused without being buffered whole (a lying or absent Content-Length does not help).
 */
import { GatewayError } from "../errors/gateway-error.js";

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw createTooLargeError(maxBytes);
  if (!request.body) throw GatewayError.invalidRequest("Request body is empty; send a JSON object", null);

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
  if (total === 0) throw GatewayError.invalidRequest("Request body is empty; send a JSON object", null);
  const text = Buffer.concat(chunks, total).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw GatewayError.invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, null);
  }
}

function createTooLargeError(maxBytes: number): GatewayError {
  return new GatewayError("payload_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}
