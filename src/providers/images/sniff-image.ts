/**
 * The format and pixel size of an image from its first bytes (PNG, JPEG, WebP, GIF), so a
 * generated image is reported with the media type of what it really is and a provider's 2xx
 * answer that holds no image is caught. Reads headers only: a bounded prefix of the base64.
 */

export interface SniffedImage {
  mediaType: "image/png" | "image/jpeg" | "image/webp" | "image/gif";
  width?: number;
  height?: number;
}

/** Enough for a JPEG whose frame header follows large EXIF/ICC segments. */
const PREFIX_BASE64_CHARS = 128 * 1024;

export function sniffBase64Image(base64: string): SniffedImage | undefined {
  const prefix = base64.slice(0, PREFIX_BASE64_CHARS - (PREFIX_BASE64_CHARS % 4));
  return sniffImage(Buffer.from(prefix, "base64"));
}

export function sniffImage(bytes: Buffer): SniffedImage | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) {
    return { mediaType: "image/png", width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { mediaType: "image/jpeg", ...readJpegSize(bytes) };
  }
  if (
    bytes.length >= 12 &&
    bytes.toString("latin1", 0, 4) === "RIFF" &&
    bytes.toString("latin1", 8, 12) === "WEBP"
  ) {
    return { mediaType: "image/webp", ...readWebpSize(bytes) };
  }
  if (bytes.length >= 10 && bytes.toString("latin1", 0, 4) === "GIF8") {
    return { mediaType: "image/gif", width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  }
  return undefined;
}

/** Walks the marker segments to the first start-of-frame (SOF0–SOF15 except DHT, JPG, DAC). */
function readJpegSize(bytes: Buffer): { width?: number; height?: number } {
  let offset = 2;
  while (offset + 9 <= bytes.length) {
    if (bytes[offset] !== 0xff) return {};
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset++; // fill byte
      continue;
    }
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + bytes.readUInt16BE(offset + 2);
  }
  return {};
}

function readWebpSize(bytes: Buffer): { width?: number; height?: number } {
  const chunk = bytes.toString("latin1", 12, 16);
  if (chunk === "VP8X" && bytes.length >= 30) {
    return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  }
  if (chunk === "VP8 " && bytes.length >= 30) {
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === "VP8L" && bytes.length >= 25) {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  return {};
}
