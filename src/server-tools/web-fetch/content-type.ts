/**
 * The media type of a fetched body and what web_fetch makes of it. The Content-Type header decides;
 * a missing or generic (`application/octet-stream`) one is settled by the first bytes.
 */

export type ContentKind = "html" | "text" | "json" | "pdf";

export interface ContentType {
  /** Lowercase essence (`text/html`), or null when the header is absent or malformed. */
  mediaType: string | null;
  /** Lowercase `charset` parameter, or null. */
  charset: string | null;
}

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

export function parseContentType(header: string | string[] | undefined): ContentType {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return { mediaType: null, charset: null };
  const [essence, ...parameters] = value.split(";");
  const mediaType = essence.trim().toLowerCase();
  let charset: string | null = null;
  for (const parameter of parameters) {
    const equals = parameter.indexOf("=");
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    charset = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
  }
  return { mediaType: MEDIA_TYPE.test(mediaType) ? mediaType : null, charset: charset || null };
}

/**
 * The kind web_fetch reads for a declared media type: `undefined` for a type it refuses, `null` when
 * the body must decide (no type, or a generic binary one).
 */
export function classifyMediaType(mediaType: string | null): ContentKind | null | undefined {
  if (mediaType === null || mediaType === "application/octet-stream" || mediaType === "binary/octet-stream") {
    return null;
  }
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html";
  if (mediaType === "application/pdf" || mediaType === "application/x-pdf") return "pdf";
  if (mediaType === "application/json" || mediaType === "text/json" || mediaType.endsWith("+json")) {
    return "json";
  }
  if (mediaType.startsWith("text/")) return "text";
  if (
    mediaType === "application/xml" ||
    mediaType.endsWith("+xml") ||
    mediaType === "application/javascript" ||
    mediaType === "application/x-ndjson"
  ) {
    return "text";
  }
  return undefined;
}

/** The kind of an untyped body from its first bytes, or undefined when it is not one web_fetch reads. */
export function sniffContentKind(bytes: Uint8Array): ContentKind | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  if (head.subarray(0, 5).toString("latin1") === "%PDF-") return "pdf";
  if (head.includes(0)) return undefined;
  const start = head
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .trimStart()
    .slice(0, 64)
    .toLowerCase();
  if (start.startsWith("<!doctype html") || start.startsWith("<html")) return "html";
  if (!isUtf8Prefix(head)) return undefined;
  return start.startsWith("{") || start.startsWith("[") ? "json" : "text";
}

/** Whether `head` is valid UTF-8, allowing one character cut off at its end. */
function isUtf8Prefix(head: Buffer): boolean {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    decoder.decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}
