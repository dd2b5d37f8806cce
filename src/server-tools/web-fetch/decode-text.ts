/**
 * Bytes of a fetched page → string. The charset comes from, in order: a byte-order mark, the
 * Content-Type header, for HTML a `<meta charset>` in the first 1024 bytes (as browsers prescan),
 * else UTF-8. An unknown charset name falls back to UTF-8; invalid bytes become U+FFFD.
 */

export function decodeText(bytes: Uint8Array, headerCharset: string | null, isHtml: boolean): string {
  const label = bomCharset(bytes) ?? headerCharset ?? (isHtml ? metaCharset(bytes) : null) ?? "utf-8";
  return new TextDecoder(supportedLabel(label)).decode(bytes);
}

function bomCharset(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return null;
}

const META_CHARSET = /<meta[^>]{0,512}?charset\s*=\s*["']?\s*([a-z0-9_:.+-]{1,40})/i;

function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString("latin1");
  const label = META_CHARSET.exec(head)?.[1]?.toLowerCase() ?? null;
  // A document whose prescan could read the label is not UTF-16, whatever it says (HTML standard).
  return label?.startsWith("utf-16") ? "utf-8" : label;
}

function supportedLabel(label: string): string {
  try {
    new TextDecoder(label);
    return label;
  } catch {
    return "utf-8";
  }
}
