/**
 * Errors reported inside a Responses body or stream → GatewayError: the `error` event
 * (`{type:"error", error:{type, code, message, param}}` live, or the fields at top level as the
 * OpenAPI spec has it) and `response.failed` / a failed JSON response (`response.error {code,
 * message}`). Classification itself is the shared one; `response.error` carries only a `code`, so
 * the codes of openai-node's `ResponseError` vocabulary are given the error type they imply.
 */
import type { GatewayError } from "../../errors/gateway-error.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import type { ResponsesErrorWire, ResponsesStreamEventWire } from "./wire-types.js";

const TYPE_BY_CODE: Record<string, string> = {
  server_error: "server_error",
  rate_limit_exceeded: "rate_limit_error",
  insufficient_quota: "insufficient_quota",
  invalid_prompt: "invalid_request_error",
  vector_store_timeout: "timeout_error",
  invalid_image: "invalid_request_error",
  invalid_image_format: "invalid_request_error",
  invalid_base64_image: "invalid_request_error",
  invalid_image_url: "invalid_request_error",
  image_too_large: "invalid_request_error",
  image_too_small: "invalid_request_error",
  image_parse_error: "invalid_request_error",
  image_content_policy_violation: "invalid_request_error",
  invalid_image_mode: "invalid_request_error",
  image_file_too_large: "invalid_request_error",
  unsupported_image_media_type: "invalid_request_error",
  empty_image_file: "invalid_request_error",
  failed_to_download_image: "invalid_request_error",
  image_file_not_found: "invalid_request_error",
};

/** An `error` stream event. */
export function classifyErrorEvent(event: ResponsesStreamEventWire): GatewayError {
  const nested = event.error;
  const error: ResponsesErrorWire =
    typeof nested === "object" && nested !== null
      ? nested
      : { code: event.code, message: event.message, param: event.param };
  return classifyResponseError(error);
}

/** `response.error` of a failed response (or an `error` event's error object). */
export function classifyResponseError(error: ResponsesErrorWire | null | undefined): GatewayError {
  const code = typeof error?.code === "string" ? error.code : undefined;
  const type =
    typeof error?.type === "string"
      ? error.type
      : code !== undefined && Object.hasOwn(TYPE_BY_CODE, code)
        ? TYPE_BY_CODE[code]
        : undefined;
  return classifyStreamErrorFrame({
    error: {
      message: typeof error?.message === "string" ? error.message : "The upstream response failed",
      ...(type === undefined ? {} : { type }),
      ...(code === undefined ? {} : { code }),
      ...(typeof error?.param === "string" ? { param: error.param } : {}),
    },
  });
}
