/**
 * Canonical image and file parts → Gemini `inlineData` / `fileData` parts.
 *
 * Base64 data (and `data:` URLs) go inline. http(s) URLs go as `fileData.fileUri`: since January
 * 2026 the Gemini API fetches public and signed http(s) URLs itself, as it always did for Files-API
 * URIs and YouTube links (ai.google.dev/gemini-api/docs/file-input-methods). The adapter never
 * fetches a URL: downloads happen in the gateway's SSRF-checked fetcher or at Google, never in a
 * provider adapter. `fileData` requires a media type, which URLs do not carry: it is taken from the
 * file name or the URL's extension; images default to image/jpeg (Gemini sniffs image bytes), other
 * files without a recognisable type are refused with `invalid_request` naming the part. URL schemes
 * other than http(s) and data (gs://, file://) are refused the same way.
 */
import type { FilePart, ImagePart, MediaSource } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { GeminiPart } from "./wire-types.js";

const MEDIA_TYPE_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  html: "text/html",
  htm: "text/html",
  xml: "text/xml",
  json: "application/json",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  flac: "audio/flac",
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
};

const YOUTUBE_HOSTS = new Set(["youtube.com", "www.youtube.com", "m.youtube.com", "youtu.be"]);

/** `location` names the part in errors, e.g. `messages[1].content[0]`. */
export function convertMediaPart(part: ImagePart | FilePart, location: string): GeminiPart {
  const inline = readInlineSource(part.source);
  if (inline !== undefined) return { inlineData: inline };
  const url = (part.source as Extract<MediaSource, { kind: "url" }>).url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw GatewayError.invalidRequest(`${location}: the ${part.type} URL is not a valid URL`, location);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw GatewayError.invalidRequest(
      `${location}: Gemini accepts only http(s) and data: URLs for ${part.type} parts, ` +
        `not ${parsed.protocol}`,
      location,
    );
  }
  const mimeType = inferMediaType(part, parsed);
  if (mimeType === undefined) {
    throw GatewayError.invalidRequest(
      `${location}: the media type of the file at this URL is unknown (Gemini needs one); ` +
        "send the file as data or use a URL ending in its extension",
      location,
    );
  }
  return { fileData: { mimeType, fileUri: url } };
}

/** Base64 sources and `data:…;base64,` URLs; media-type parameters (`; name=x.pdf`) are removed. */
function readInlineSource(source: MediaSource): { mimeType: string; data: string } | undefined {
  if (source.kind === "base64") return { mimeType: stripParameters(source.mediaType), data: source.data };
  const match = /^data:([^,]*?);base64,(.*)$/s.exec(source.url);
  if (match === null) return undefined;
  const mimeType = stripParameters(match[1].split(";")[0] ?? "");
  return { mimeType: mimeType === "" ? "application/octet-stream" : mimeType, data: match[2] };
}

function inferMediaType(part: ImagePart | FilePart, url: URL): string | undefined {
  const fromName =
    part.type === "file" && part.filename !== undefined ? byExtension(part.filename) : undefined;
  const inferred = fromName ?? byExtension(url.pathname);
  if (inferred !== undefined) return inferred;
  if (YOUTUBE_HOSTS.has(url.hostname.toLowerCase())) return "video/mp4";
  return part.type === "image" ? "image/jpeg" : undefined;
}

function byExtension(name: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : MEDIA_TYPE_BY_EXTENSION[extension];
}

function stripParameters(mediaType: string): string {
  return mediaType.split(";")[0]!.trim().toLowerCase();
}
