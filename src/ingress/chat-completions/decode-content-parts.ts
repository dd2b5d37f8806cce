/**
 * Content parts of user and tool messages → canonical text, image and file parts. Media arrive as
 * `data:` URLs (kept as base64, not decoded) or http(s) URLs (fetched later, behind the SSRF guard).
 */
import type { CacheControl, FilePart, ImagePart, TextPart, UserContentPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { decodeMediaUrl, parseDataUrl } from "../shared/parse-data-url.js";
import type { ChatUserContentPartBody } from "./request-schema.js";

type ImageUrlPartBody = Extract<ChatUserContentPartBody, { type: "image_url" }>;
type FilePartBody = Extract<ChatUserContentPartBody, { type: "file" }>;
type ToolContentPartBody = Exclude<ChatUserContentPartBody, FilePartBody>;
type TextPartBody = Extract<ChatUserContentPartBody, { type: "text" }>;
type CacheControlBody = TextPartBody["cache_control"];

/** `param` is the path of the message's `content`, e.g. `messages[2].content`. */
export function decodeUserContent(
  content: string | ChatUserContentPartBody[] | null | undefined,
  param: string,
): UserContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, index) => {
    const partParam = `${param}[${index}]`;
    if (part.type === "text") return decodeTextPart(part);
    if (part.type === "image_url") return decodeImagePart(part, partParam);
    return decodeFilePart(part, partParam);
  });
}

/** Content of a `tool` message: the result of one tool call, text and images. */
export function decodeToolResultContent(
  content: string | ToolContentPartBody[] | null | undefined,
  param: string,
): Array<TextPart | ImagePart> {
  if (content === null || content === undefined || content === "") return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, index) =>
    part.type === "text" ? decodeTextPart(part) : decodeImagePart(part, `${param}[${index}]`),
  );
}

export function decodeTextPart(part: { text: string; cache_control?: CacheControlBody }): TextPart {
  const text: TextPart = { type: "text", text: part.text };
  return withCacheControl(text, part.cache_control);
}

function decodeImagePart(part: ImageUrlPartBody, param: string): ImagePart {
  const url = part.image_url.url;
  const image: ImagePart = { type: "image", source: decodeMediaUrl(url, `${param}.image_url.url`) };
  if (part.image_url.detail !== undefined) image.detail = part.image_url.detail;
  return withCacheControl(image, part.cache_control);
}

function decodeFilePart(part: FilePartBody, param: string): FilePart {
  const { file_data: fileData, file_url: fileUrl, file_id: fileId, filename } = part.file;
  let file: FilePart;
  if (fileData !== undefined) {
    const dataUrl = parseDataUrl(fileData);
    if (dataUrl === undefined) {
      throw GatewayError.invalidRequest(
        `${param}.file.file_data must be a data URL (data:<mime>;base64,<data>)`,
        `${param}.file.file_data`,
      );
    }
    file = { type: "file", source: { kind: "base64", ...dataUrl } };
  } else if (fileUrl !== undefined) {
    file = { type: "file", source: decodeMediaUrl(fileUrl, `${param}.file.file_url`) };
  } else if (fileId !== undefined) {
    // Uploaded files live at a provider; the gateway has no file store to resolve ids against.
    throw GatewayError.invalidRequest(
      `${param}.file.file_id is not supported; use file_data or file_url`,
      `${param}.file.file_id`,
    );
  } else {
    throw GatewayError.invalidRequest(`${param}.file must have file_data or file_url`, `${param}.file`);
  }
  if (filename !== undefined) file.filename = filename;
  file.param = param;
  return withCacheControl(file, part.cache_control);
}

function withCacheControl<T extends { cacheControl?: CacheControl }>(part: T, body: CacheControlBody): T {
  if (body !== undefined)
    part.cacheControl = body.ttl === undefined ? { type: body.type } : { type: body.type, ttl: body.ttl };
  return part;
}
