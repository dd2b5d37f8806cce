import type { MediaSource } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";

/**
 * Parses `data:<mime>[;param=value]*;base64,<data>` URLs (image_url.url, file.file_data). Written by
 * hand rather than with a regex: payloads are megabytes and only the header needs looking at.
 */

const MAX_HEADER_LENGTH = 1_024;

export interface DataUrl {
  mediaType: string;
  /** Base64 payload, not decoded (upstreams take base64). */
  data: string;
}

export function isDataUrl(url: string): boolean {
  return url.startsWith("data:");
}

/** The parsed URL, or undefined when it is not a base64 data URL. */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (!isDataUrl(url)) return undefined;
  const comma = url.indexOf(",");
  // The header (media type and parameters) is short; a longer one is no data URL worth splitting.
  if (comma < 0 || comma > MAX_HEADER_LENGTH) return undefined;
  const attributes = url.slice("data:".length, comma).split(";");
  if (attributes.length < 2 || attributes[attributes.length - 1].toLowerCase() !== "base64") return undefined;
  const mediaType = attributes[0].trim().toLowerCase();
  if (mediaType === "" || !mediaType.includes("/")) return undefined;
  return { mediaType, data: url.slice(comma + 1) };
}

/** True for absolute http(s) URLs; whether the gateway may fetch them is decided when fetching. */
export function isHttpUrl(url: string): boolean {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return false;
  }
  return protocol === "http:" || protocol === "https:";
}

/** An image or file URL of a request: a base64 data URL, or an http(s) URL; anything else is refused naming `param`. */
export function decodeMediaUrl(url: string, param: string): MediaSource {
  if (isDataUrl(url)) {
    const dataUrl = parseDataUrl(url);
    if (dataUrl === undefined) {
      throw GatewayError.invalidRequest(
        `${param} must be a base64 data URL (data:<mime>;base64,<data>)`,
        param,
      );
    }
    return { kind: "base64", ...dataUrl };
  }
  if (!isHttpUrl(url))
    throw GatewayError.invalidRequest(`${param} must be an http(s) URL or a data URL`, param);
  return { kind: "url", url };
}
