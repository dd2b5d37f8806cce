/**
 * Width and height of an image from its file header (PNG, GIF, JPEG, WebP), reading a bounded
 * prefix of the data: what upstreams bill for an image follows from its size (docs/limits.md).
 */
import type { MediaSource } from "../canonical/index.js";

export interface ImageSize {
  width: number;
  height: number;
}

/** Enough of the file to find a JPEG's frame header behind large EXIF or ICC segments. */
const IMAGE_HEADER_BASE64_CHARS = 256 * 1024;

/** The size of a base64 image, or undefined for a URL, an unknown format or a truncated header. */
export function readImageSourceSize(source: MediaSource): ImageSize | undefined {
  if (source.kind === "url") return undefined;
  return readImageSize(Buffer.from(source.data.slice(0, IMAGE_HEADER_BASE64_CHARS), "base64"));
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
