/**
 * Canonical images and files → Anthropic `image` and `document` blocks.
 *
 * - Images: base64 → `{type:"base64", media_type, data}`, URLs → `{type:"url", url}`.
 * - PDFs: `document` with a base64 or URL source. A PDF that arrived as an "image" (a
 *   `data:application/pdf` image URL, which chat clients send) becomes a document too, instead
 *   of an image block Anthropic rejects for its media type.
 * - Text files (`text/*`): `document` with a plain-text source, whose `data` is the decoded text
 *   (not base64), as Anthropic's `PlainTextSource` wants.
 * - A file given by URL is sent as a URL document source: Anthropic fetches it and accepts PDFs
 *   only, which is the only file kind a URL can name there.
 * - Anything else (Word, spreadsheets, audio, …) is an `invalid_request` naming the part: the
 *   Messages API has no block for it and silently dropping it would change the question.
 */
import type { CacheControl, FilePart, ImagePart, MediaSource } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { AnthropicCacheControl, AnthropicDocumentBlock, AnthropicImageBlock } from "./wire-types.js";

export function convertImage(part: ImagePart, param: string): AnthropicImageBlock | AnthropicDocumentBlock {
  if (part.source.kind === "base64" && baseMediaType(part.source.mediaType) === "application/pdf") {
    return convertFile({ type: "file", source: part.source, cacheControl: part.cacheControl }, param);
  }
  return {
    type: "image",
    source:
      part.source.kind === "url"
        ? { type: "url", url: part.source.url }
        : { type: "base64", media_type: baseMediaType(part.source.mediaType), data: part.source.data },
    ...withCacheControl(part.cacheControl),
  };
}

export function convertFile(part: FilePart, param: string): AnthropicDocumentBlock {
  const title = part.title ?? part.filename;
  const cacheControl = withCacheControl(part.cacheControl);
  const common = title === undefined || title === "" ? cacheControl : { title, ...cacheControl };
  const { source } = part;
  if (source.kind === "url") return { type: "document", source: { type: "url", url: source.url }, ...common };
  const mediaType = baseMediaType(source.mediaType);
  if (mediaType === "application/pdf") {
    return {
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: source.data },
      ...common,
    };
  }
  if (mediaType.startsWith("text/")) {
    return {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: decodeBase64Text(source) },
      ...common,
    };
  }
  throw GatewayError.invalidRequest(
    `The file at ${param} has media type "${mediaType}", which this model's provider cannot read; ` +
      "send a PDF or a plain-text file",
    param,
  );
}

export function convertCacheControl(cacheControl: CacheControl): AnthropicCacheControl {
  return cacheControl.ttl === undefined
    ? { type: "ephemeral" }
    : { type: "ephemeral", ttl: cacheControl.ttl };
}

export function withCacheControl(cacheControl: CacheControl | undefined): {
  cache_control?: AnthropicCacheControl;
} {
  return cacheControl === undefined ? {} : { cache_control: convertCacheControl(cacheControl) };
}

/** `application/pdf; name=a.pdf` → `application/pdf` (clients add parameters to data-URL types). */
function baseMediaType(mediaType: string): string {
  return mediaType.split(";")[0].trim().toLowerCase();
}

function decodeBase64Text(source: Extract<MediaSource, { kind: "base64" }>): string {
  return Buffer.from(source.data, "base64").toString("utf8");
}
