/**
 * A Gemini `streamGenerateContent?alt=sse` event stream → canonical parts.
 * Frames are `data: {json}` with CRLF line ends, no event names and no terminator: the stream just
 * ends after the chunk carrying `finishReason`. The shared SSE reader handles the framing.
 */
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { eachAsBatch, flattenBatches, parseEventBatches, readFrameObject } from "../shared/part-batches.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { type ChunkParserOptions, createChunkParser } from "./create-chunk-parser.js";
import type { GenerateContentResponseWire } from "./wire-types.js";

/**
 * Throws a GatewayError for an error frame, a frame that is not JSON, a blocked prompt, or a stream
 * that ends without a finish reason; errors of `events` (network, deadlines, aborts) propagate
 * unchanged. The caller decides whether a throw becomes an `error` part or a plain error.
 */
export function parseGenerateContentStream(
  events: AsyncIterable<SseEvent>,
  options: ChunkParserOptions,
): AsyncGenerator<CanonicalStreamPart> {
  return flattenBatches(parseGenerateContentBatches(eachAsBatch(events), options));
}

/** parseGenerateContentStream over batches of events: a batch of parts per batch of events. */
export function parseGenerateContentBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
  options: ChunkParserOptions,
): AsyncGenerator<CanonicalStreamPart[]> {
  const parser = createChunkParser(options);
  return parseEventBatches(batches, {
    accept(event, out) {
      const data = event.data.trim();
      const chunk = readFrameObject(data);
      if (chunk === undefined) return "more";
      for (const part of parser.acceptChunk(chunk as GenerateContentResponseWire)) out.push(part);
      return "more";
    },
    finish(out) {
      for (const part of parser.finish()) out.push(part);
    },
  });
}
