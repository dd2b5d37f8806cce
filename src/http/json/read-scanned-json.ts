/**
 * A JSON text read chunk by chunk: each chunk's shape is checked as it arrives
 * (json-shape-scanner.ts), and once the text is whole it is parsed in one call when that is cheap,
 * or piece by piece with the event loop let in between (parse-json-in-slices.ts).
 */
import { isUtf8 } from "node:buffer";
import { yieldToEventLoop } from "../../engine/yield-to-event-loop.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { type JsonShapeLimits, JsonShapeScanner } from "./json-shape-scanner.js";
import { parseJsonInSlices } from "./parse-json-in-slices.js";

/**
 * Below both, one `JSON.parse` takes a few milliseconds whatever the shape: its cost grows with
 * the bytes and with the number of values.
 */
const WHOLE_PARSE_BYTES = 512 * 1024;
const WHOLE_PARSE_NODES = 10_000;

export interface JsonScan {
  readonly scanner: JsonShapeScanner;
  readonly chunks: Uint8Array[];
  total: number;
}

export function startJsonScan(limits: JsonShapeLimits): JsonScan {
  return { scanner: new JsonShapeScanner(limits), chunks: [], total: 0 };
}

/** Keeps the chunk and checks its shape; throws `invalid_request` past a bound. */
export function scanJsonChunk(scan: JsonScan, chunk: Uint8Array): void {
  scan.chunks.push(chunk);
  scan.total += chunk.byteLength;
  scan.scanner.write(chunk);
}

/** The value of the whole text; `invalid_request` when it is empty, not UTF-8 or not JSON. */
export async function parseScannedJson(scan: JsonScan): Promise<unknown> {
  if (scan.total === 0) throw createEmptyError();
  const scanned = scan.scanner.finish();
  const { chunks, total } = scan;
  const bytes = chunks.length === 1 ? toBuffer(chunks[0]) : Buffer.concat(chunks, total);
  if (total < WHOLE_PARSE_BYTES && scanned.nodes < WHOLE_PARSE_NODES) {
    checkUtf8(bytes);
    return parseWhole(bytes.toString("utf8"));
  }
  // Joining, checking and parsing megabytes each take a while: separate turns of the loop.
  await yieldToEventLoop();
  checkUtf8(bytes);
  await yieldToEventLoop();
  return parseJsonInSlices(bytes, scanned);
}

/** One JSON text held whole (a WebSocket message): scanned, then parsed as a read body is. */
export function parseJsonBytes(bytes: Uint8Array, limits: JsonShapeLimits): Promise<unknown> {
  const scan = startJsonScan(limits);
  try {
    scanJsonChunk(scan, bytes);
  } catch (error) {
    return Promise.reject(error);
  }
  return parseScannedJson(scan);
}

function toBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

function checkUtf8(bytes: Buffer): void {
  if (!isUtf8(bytes)) throw GatewayError.invalidRequest("Request body is not valid UTF-8", null);
}

function parseWhole(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw GatewayError.invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, null);
  }
}

function createEmptyError(): GatewayError {
  return GatewayError.invalidRequest("Request body is empty; send a JSON object", null);
}
