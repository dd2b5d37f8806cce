/**
 * What the Gemini API bills for input, as far as a reservation needs it
 * (metering/bound-input-tokens.ts, docs/limits.md).
 *
 * - Text: Gemini's SentencePiece tokenizer falls back to bytes for what its vocabulary lacks, so
 *   text never has more tokens than UTF-8 bytes; it is not available here, so text counts by the
 *   measured bound from its o200k count (metering/text-token-bounds.ts), never above its bytes.
 * - Images: 258 tokens when both sides are at most 384 px, else 258 per 768×768 tile; current
 *   models spend up to 1,120 per image at their default media resolution. An image of unknown
 *   size (a URL Gemini fetches) has no bound.
 * - PDFs: each page as an image (up to 1,120 tokens) and its text.
 * - Schemas: local `$ref`s are inlined for Gemini (clean-schema.ts), so what the cleaned schemas
 *   add to the request's JSON is measured (cleaning once per request, the builder reuses it).
 */
import type { CanonicalRequest } from "../../canonical/index.js";
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import type { ImageSize } from "../../metering/read-image-size.js";
import { GOOGLE_TEXT_BOUND } from "../../metering/text-token-bounds.js";
import { cleanRequestSchemas } from "./clean-request-schemas.js";

const TILE_TOKENS = 258;
const MAX_MEDIA_RESOLUTION_TOKENS = 1_120;
const PDF_PAGE_TEXT_TOKENS = 3_000;
/** Gemini's tool prompt is unpublished: Anthropic's published size stands in. */
const TOOL_PROMPT_TOKENS = 346;

export const GOOGLE_INPUT_RULES: UpstreamInputRules = {
  tokenizer: GOOGLE_TEXT_BOUND,
  imageTokens: (size) => (size === undefined ? Number.POSITIVE_INFINITY : countImageTokens(size)),
  pdfPageTokens: PDF_PAGE_TEXT_TOKENS + MAX_MEDIA_RESOLUTION_TOKENS,
  toolPromptTokens: TOOL_PROMPT_TOKENS,
  measureAddedBytes: measureInlinedSchemaBytes,
};

function countImageTokens({ width, height }: ImageSize): number {
  const tiles = width <= 384 && height <= 384 ? 1 : Math.ceil(width / 768) * Math.ceil(height / 768);
  return Math.max(MAX_MEDIA_RESOLUTION_TOKENS, tiles * TILE_TOKENS);
}

/** UTF-8 bytes the cleaned schemas have beyond the caller's (already counted as the request's JSON). */
function measureInlinedSchemaBytes(request: CanonicalRequest): number {
  const cleaned = cleanRequestSchemas(request);
  let added = 0;
  const compare = (original: unknown, sent: unknown) => {
    if (sent === undefined) return;
    added += Math.max(0, measureJson(sent) - measureJson(original));
  };
  request.tools.forEach((tool, index) => {
    compare(tool.parameters, cleaned.parameters[index]);
  });
  if (request.responseFormat?.type === "json_schema") {
    compare(request.responseFormat.schema, cleaned.responseSchema);
  }
  return added;
}

function measureJson(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), "utf8");
}
