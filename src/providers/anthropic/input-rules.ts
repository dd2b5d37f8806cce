/**
 * What Anthropic's Messages API bills for input, as far as a reservation needs it
 * (metering/bound-input-tokens.ts, docs/limits.md).
 *
 * - Text: Claude's tokenizers are byte-level and differ by model (one model's count of the same
 *   text can be a third above its predecessor's); none is available here, so text counts by the
 *   measured bound from its o200k count and its characters (metering/text-token-bounds.ts), never
 *   above one token per UTF-8 byte.
 * - Images: about width × height / 750 tokens, after the downscale to the model's native
 *   resolution (current models: a long edge of at most 2576 px and about 3.75 megapixels; older
 *   ones 1568 px and 1.15 megapixels) and padding to multiples of 28 px: at most ~5,150.
 * - PDFs: each page is sent as its text (1,500–3,000 tokens for a full page) and as an image.
 * - Tools: the tool-use system prompt (346 tokens, 313 when a tool is forced).
 */
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import type { ImageSize } from "../../metering/read-image-size.js";
import { ANTHROPIC_TEXT_BOUND } from "../../metering/text-token-bounds.js";

const MAX_EDGE = 2576;
const MAX_PIXELS = 3_750_000;
const PADDING = 28;
const PIXELS_PER_TOKEN = 750;
/**
 * The most any image is billed: 3.75 megapixels, each side padded by up to 28 px (and a pixel of
 * rounding), the sides' sum largest at a 2576-px edge.
 */
export const ANTHROPIC_MAX_IMAGE_TOKENS = Math.ceil(
  (MAX_PIXELS + PADDING * (MAX_EDGE + MAX_PIXELS / MAX_EDGE + 2) + PADDING * PADDING) / PIXELS_PER_TOKEN,
);
const PDF_PAGE_TEXT_TOKENS = 3_000;

export const ANTHROPIC_INPUT_RULES: UpstreamInputRules = {
  tokenizer: ANTHROPIC_TEXT_BOUND,
  imageTokens: (size) => (size === undefined ? ANTHROPIC_MAX_IMAGE_TOKENS : countImageTokens(size)),
  pdfPageTokens: PDF_PAGE_TEXT_TOKENS + ANTHROPIC_MAX_IMAGE_TOKENS,
  toolPromptTokens: 346,
};

function countImageTokens({ width, height }: ImageSize): number {
  if (width <= 0 || height <= 0) return 1;
  const scale = Math.min(1, MAX_EDGE / Math.max(width, height), Math.sqrt(MAX_PIXELS / (width * height)));
  const padded = (edge: number) => Math.ceil(Math.ceil(edge * scale) / PADDING) * PADDING;
  return Math.ceil((padded(width) * padded(height)) / PIXELS_PER_TOKEN);
}
