/**
 * Parses `data:<mime>[;param=value]*;base64,<data>` URLs (image_url.url, file.file_data). Written by
 * hand rather than with a regex: payloads are megabytes and only the header needs looking at.
 */

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
  if (comma < 0) return undefined;
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
