/**
 * What OpenAI-format upstreams bill for input, as far as a reservation needs it
 * (metering/bound-input-tokens.ts, docs/limits.md).
 *
 * OpenAI's own APIs (Chat Completions and Responses):
 * - Text: o200k, OpenAI's tokenizer, counted here.
 * - Images: the larger of OpenAI's two published schemes for its current models. Tiles: the
 *   image is fitted into 2048×2048, its short side scaled to at most 768 px, and each 512-px tile
 *   costs 170 tokens plus 85 per image. Patches: 32-px patches, at most 1,536 (the image scaled
 *   down to fit), times the model's multiplier, at most 2.46. At most 3,779 tokens. (Older
 *   models with other multipliers, such as gpt-4o-mini's, are not in the catalog.)
 * - PDFs: each page is sent as its extracted text and an image of the page.
 *
 * Any other host speaking Chat Completions: its tokenizer and its vision model are unknown, so
 * text counts one token per UTF-8 byte and an image one token per 14×14-pixel patch (the
 * smallest patch of common vision encoders, without merging); an image of unknown size, and
 * PDFs, have no bound.
 */
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import type { ImageSize } from "../../metering/read-image-size.js";

const PDF_PAGE_TEXT_TOKENS = 3_000;
/** OpenAI tools are rendered as a short preamble plus their definitions. */
const OPENAI_TOOL_PROMPT_TOKENS = 64;
/** The system prompt an unknown host adds for tools: Anthropic's published size, as a stand-in. */
const UNKNOWN_TOOL_PROMPT_TOKENS = 346;

export const OPENAI_MAX_IMAGE_TOKENS = 3_779;

export const OPENAI_INPUT_RULES: UpstreamInputRules = {
  tokenizer: "o200k",
  imageTokens: (size) => (size === undefined ? OPENAI_MAX_IMAGE_TOKENS : countOpenAiImageTokens(size)),
  pdfPageTokens: PDF_PAGE_TEXT_TOKENS + OPENAI_MAX_IMAGE_TOKENS,
  toolPromptTokens: OPENAI_TOOL_PROMPT_TOKENS,
};

export const UNKNOWN_HOST_INPUT_RULES: UpstreamInputRules = {
  tokenizer: "bytes",
  imageTokens: (size) =>
    size === undefined ? Number.POSITIVE_INFINITY : 64 + Math.ceil((size.width * size.height) / (14 * 14)),
  pdfPageTokens: Number.POSITIVE_INFINITY,
  toolPromptTokens: UNKNOWN_TOOL_PROMPT_TOKENS,
};

function countOpenAiImageTokens({ width, height }: ImageSize): number {
  if (width <= 0 || height <= 0) return 85;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const shortSide = Math.min(width, height) * fit;
  const scale = fit * Math.min(1, 768 / shortSide);
  const tiles = Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
  const patches = Math.min(1_536, Math.ceil(width / 32) * Math.ceil(height / 32));
  return Math.min(OPENAI_MAX_IMAGE_TOKENS, Math.max(85 + 170 * tiles, Math.ceil(patches * 2.46)));
}
