/** A non-streamed Gemini body → canonical parts or a CanonicalResult. */
import type { CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { foldStreamParts } from "../shared/fold-stream-parts.js";
import { isRecord } from "../shared/read-wire-values.js";
import { type ChunkParserOptions, createChunkParser } from "./create-chunk-parser.js";
import type { GenerateContentResponseWire } from "./wire-types.js";

/**
 * Throws a GatewayError for a body that is not a response: an error envelope sent with HTTP 200,
 * a blocked prompt (`content_filter`), or something that is not a JSON object.
 */
export function parseGenerateContentResponse(json: unknown, options: ChunkParserOptions): CanonicalResult {
  return foldStreamParts(convertJsonBodyToParts(json, options));
}

/**
 * One response object, or an array of them: what `streamGenerateContent` sends when `alt=sse` was
 * lost on the way (a proxy rewriting the query) — the chunks are the same, only the framing differs.
 * A complete body without finishReason finishes as `other`.
 */
export function convertJsonBodyToParts(json: unknown, options: ChunkParserOptions): CanonicalStreamPart[] {
  const chunks = Array.isArray(json) ? json : [json];
  if (chunks.length === 0 || !chunks.every(isRecord)) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned an unexpected body");
  }
  const parser = createChunkParser(options);
  const parts = chunks.flatMap((chunk) => parser.acceptChunk(chunk as GenerateContentResponseWire));
  return [...parts, ...parser.finish({ requireFinishReason: false })];
}
