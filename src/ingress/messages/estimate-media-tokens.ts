/**
 * Token estimates for the images and documents of a request, which the text tokenizer in
 * metering/estimate-usage.ts does not see. Numbers follow Anthropic's published accounting, the
 * format these counts are reported in:
 *
 * - Images: `width × height / 750` after the downscale every vision model applies (long edge at most
 *   1568 px, at most ~1600 tokens). Dimensions are read from the PNG, GIF, JPEG or WebP header of
 *   base64 data; a URL or an unreadable header counts as a full-size image (an overestimate is the
 *   safe side for a client deciding whether a prompt fits).
 * - PDFs: every page is sent as its text plus an image of the page, 1,500–3,000 text tokens and up to
 *   ~1,600 image tokens: 3,000 per page, pages counted from the file's page objects
 *   (metering/count-pdf-pages.ts).
 * - Text documents: their text, tokenized.
 *
 * These are estimates for a client deciding whether a prompt fits; what a request reserves is
 * bounded per provider kind instead (metering/bound-input-tokens.ts).
 */
import type { CanonicalRequest, MediaSource } from "../../canonical/index.js";
import { countPdfPages } from "../../metering/count-pdf-pages.js";
import { TokenCounter } from "../../metering/estimate-usage.js";
import { readImageSourceSize } from "../../metering/read-image-size.js";

export const MAX_IMAGE_TOKENS = 1600;
export const PDF_PAGE_TOKENS = 3000;
const MAX_IMAGE_EDGE = 1568;
const PIXELS_PER_TOKEN = 750;
/** Without countable pages (an encrypted or damaged file), a page per this many bytes. */
const PDF_BYTES_PER_PAGE_FALLBACK = 100_000;

/** `counter`: the request's, so its texts and its documents share one counting budget. */
export function estimateMediaTokens(request: CanonicalRequest, counter = new TokenCounter()): number {
  let tokens = 0;
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "image") tokens += estimateImageTokens(part.source);
      else if (part.type === "file") tokens += estimateFileTokens(part.source, counter);
      else if (part.type === "tool-result") {
        for (const inner of part.content)
          if (inner.type === "image") tokens += estimateImageTokens(inner.source);
      }
    }
  }
  return tokens;
}

export function estimateImageTokens(source: MediaSource): number {
  const size = readImageSourceSize(source);
  if (size === undefined) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_IMAGE_EDGE / Math.max(size.width, size.height));
  const pixels = Math.round(size.width * scale) * Math.round(size.height * scale);
  return Math.max(1, Math.min(MAX_IMAGE_TOKENS, Math.ceil(pixels / PIXELS_PER_TOKEN)));
}

export function estimateFileTokens(source: MediaSource, counter = new TokenCounter()): number {
  if (source.kind === "url") return PDF_PAGE_TOKENS;
  const mediaType = source.mediaType.toLowerCase();
  if (mediaType.startsWith("image/")) return estimateImageTokens(source);
  const bytes = Buffer.from(source.data, "base64");
  if (mediaType === "application/pdf") {
    const pages = countPdfPages(bytes) ?? Math.ceil(bytes.length / PDF_BYTES_PER_PAGE_FALLBACK);
    return Math.max(1, pages) * PDF_PAGE_TOKENS;
  }
  // Text, JSON, CSV, markup and anything else: read as text, which is what a model would get.
  return counter.estimate(bytes.toString("utf8"));
}
