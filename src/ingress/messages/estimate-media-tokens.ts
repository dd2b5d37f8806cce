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
 *   ~1,600 image tokens: 3,000 per page, pages counted from the file's page objects.
 * - Text documents: their text, tokenized.
 *
 * Proposed to move to metering/ so generation estimates (client gone before usage arrived) count
 * media too; it lives here until then because this folder is the only user.
 */
import type { CanonicalRequest, MediaSource } from "../../canonical/index.js";
import { estimateTextTokens } from "../../metering/estimate-usage.js";

export const MAX_IMAGE_TOKENS = 1600;
export const PDF_PAGE_TOKENS = 3000;
const MAX_IMAGE_EDGE = 1568;
const PIXELS_PER_TOKEN = 750;
/** Enough of the file to find a JPEG's frame header behind large EXIF or ICC segments. */
const IMAGE_HEADER_BASE64_CHARS = 256 * 1024;
/** Without readable page objects (compressed object streams), a page per this many bytes. */
const PDF_BYTES_PER_PAGE_FALLBACK = 100_000;

export function estimateMediaTokens(request: CanonicalRequest): number {
  let tokens = 0;
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "image") tokens += estimateImageTokens(part.source);
      else if (part.type === "file") tokens += estimateFileTokens(part.source);
      else if (part.type === "tool-result") {
        for (const inner of part.content)
          if (inner.type === "image") tokens += estimateImageTokens(inner.source);
      }
    }
  }
  return tokens;
}

export function estimateImageTokens(source: MediaSource): number {
  if (source.kind === "url") return MAX_IMAGE_TOKENS;
  const size = readImageSize(Buffer.from(source.data.slice(0, IMAGE_HEADER_BASE64_CHARS), "base64"));
  if (size === undefined) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_IMAGE_EDGE / Math.max(size.width, size.height));
  const pixels = Math.round(size.width * scale) * Math.round(size.height * scale);
  return Math.max(1, Math.min(MAX_IMAGE_TOKENS, Math.ceil(pixels / PIXELS_PER_TOKEN)));
}

export function estimateFileTokens(source: MediaSource): number {
  if (source.kind === "url") return PDF_PAGE_TOKENS;
  const mediaType = source.mediaType.toLowerCase();
  if (mediaType.startsWith("image/")) return estimateImageTokens(source);
  const bytes = Buffer.from(source.data, "base64");
  if (mediaType === "application/pdf") return countPdfPages(bytes) * PDF_PAGE_TOKENS;
  // Text, JSON, CSV, markup and anything else: read as text, which is what a model would get.
  return estimateTextTokens(bytes.toString("utf8"));
}

export function countPdfPages(bytes: Buffer): number {
  const text = bytes.toString("latin1");
  const pageObjects = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  if (pageObjects > 0) return pageObjects;
  return Math.max(1, Math.ceil(bytes.length / PDF_BYTES_PER_PAGE_FALLBACK));
}

export interface ImageSize {
  width: number;
  height: number;
}

/** Width and height from the file header, or undefined for unknown or truncated files. */
export function readImageSize(bytes: Buffer): ImageSize | undefined {
  try {
    if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) {
      return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
    }
    if (bytes.length >= 10 && bytes.toString("latin1", 0, 4) === "GIF8") {
      return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
    }
    if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return readJpegSize(bytes);
    if (
      bytes.length >= 30 &&
      bytes.toString("latin1", 0, 4) === "RIFF" &&
      bytes.toString("latin1", 8, 12) === "WEBP"
    ) {
      return readWebpSize(bytes);
    }
  } catch {
    // A header that claims more bytes than there are: unknown size.
  }
  return undefined;
}

/** Walks the JPEG segments to the first start-of-frame marker, which holds the size. */
function readJpegSize(bytes: Buffer): ImageSize | undefined {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    const isStartOfFrame =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isStartOfFrame)
      return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + bytes.readUInt16BE(offset + 2);
  }
  return undefined;
}

function readWebpSize(bytes: Buffer): ImageSize | undefined {
  const chunk = bytes.toString("latin1", 12, 16);
  if (chunk === "VP8 ")
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = bytes.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
  return undefined;
}
