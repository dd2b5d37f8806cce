/**
 * Message content parts → canonical parts, per role:
 *
 * - user: input_text, input_image, input_file;
 * - system / developer: input_text only (the canonical system prompt is text);
 * - assistant: output_text, input_text and refusal, all as text (what the model said before);
 * - function_call_output: input_text and input_image.
 *
 * A part in the wrong role is `invalid_request` naming the part's `type`, rather than being dropped.
 * Media arrive as `data:` URLs (kept as base64, not decoded) or http(s) URLs (fetched later, behind
 * the SSRF guard).
 */
import type { FilePart, ImagePart, TextPart, UserContentPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { decodeMediaUrl, parseDataUrl } from "../shared/parse-data-url.js";
import type { ResponsesContentPartBody, ResponsesFunctionCallOutputItemBody } from "./input-item-schema.js";

type ImagePartBody = Extract<ResponsesContentPartBody, { type: "input_image" }>;
type FilePartBody = Extract<ResponsesContentPartBody, { type: "input_file" }>;
type ContentBody = string | ResponsesContentPartBody[];

/** `param` is the path of the message's `content`, e.g. `input[2].content`. */
export function decodeUserContent(content: ContentBody, param: string): UserContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, index) => {
    const partParam = `${param}[${index}]`;
    switch (part.type) {
      case "input_text":
        return { type: "text", text: part.text };
      case "input_image":
        return decodeImagePart(part, partParam);
      case "input_file":
        return decodeFilePart(part, partParam);
      default:
        throw createMisplacedPartError(part.type, partParam, "user");
    }
  });
}

/** `role` is `system` or `developer`, for the error message. */
export function decodeSystemContent(content: ContentBody, param: string, role: string): TextPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, index) => {
    if (part.type === "input_text") return { type: "text", text: part.text };
    throw createMisplacedPartError(part.type, `${param}[${index}]`, role);
  });
}

export function decodeAssistantContent(content: ContentBody, param: string): TextPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, index) => {
    if (part.type === "output_text" || part.type === "input_text") return { type: "text", text: part.text };
    if (part.type === "refusal") return { type: "text", text: part.refusal };
    throw createMisplacedPartError(part.type, `${param}[${index}]`, "assistant");
  });
}

/** The `output` of a function_call_output item; `param` is its path (`input[3].output`). */
export function decodeToolOutput(
  output: ResponsesFunctionCallOutputItemBody["output"],
  param: string,
): Array<TextPart | ImagePart> {
  if (output === "") return [];
  if (typeof output === "string") return [{ type: "text", text: output }];
  return output.map((part, index) =>
    part.type === "input_text"
      ? { type: "text", text: part.text }
      : decodeImagePart(part, `${param}[${index}]`),
  );
}

function createMisplacedPartError(type: string, param: string, role: string): GatewayError {
  return GatewayError.invalidRequest(
    `${param}.type "${type}" is not allowed in ${role} messages`,
    `${param}.type`,
  );
}

function decodeImagePart(part: ImagePartBody, param: string): ImagePart {
  const image: ImagePart = { type: "image", source: decodeMediaUrl(part.image_url, `${param}.image_url`) };
  // `original` (full resolution) has no canonical counterpart; `high` is the closest.
  if (isSet(part.detail)) image.detail = part.detail === "original" ? "high" : part.detail;
  return image;
}

function decodeFilePart(part: FilePartBody, param: string): FilePart {
  let file: FilePart;
  if (isSet(part.file_data)) {
    const dataUrl = parseDataUrl(part.file_data);
    if (dataUrl === undefined) {
      throw GatewayError.invalidRequest(
        `${param}.file_data must be a data URL (data:<mime>;base64,<data>)`,
        `${param}.file_data`,
      );
    }
    file = { type: "file", source: { kind: "base64", ...dataUrl } };
  } else if (isSet(part.file_url)) {
    file = { type: "file", source: decodeMediaUrl(part.file_url, `${param}.file_url`) };
  } else if (isSet(part.file_id)) {
    // Uploaded files live at a provider; the gateway has no file store to resolve ids against.
    throw GatewayError.invalidRequest(
      `${param}.file_id is not supported; use file_data or file_url`,
      `${param}.file_id`,
    );
  } else {
    throw GatewayError.invalidRequest(`${param} must have file_data or file_url`, param);
  }
  if (isSet(part.filename)) file.filename = part.filename;
  file.param = param;
  return file;
}

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}
