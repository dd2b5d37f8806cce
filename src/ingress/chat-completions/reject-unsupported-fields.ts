/**
 * Fields the gateway rejects rather than ignores: silently dropping them
 * would give the caller something other than what they asked for. Each rejection is
 * `invalid_request` with `param` naming the field. `null` counts as absent, as everywhere in the
 * schema.
 */
import { GatewayError } from "../../errors/gateway-error.js";
import type { ChatCompletionRequestBody } from "./request-schema.js";

export function rejectUnsupportedFields(request: ChatCompletionRequestBody): void {
  if (request.service_tier !== null && request.service_tier !== undefined) {
    throw GatewayError.invalidRequest("service_tier is not supported", "service_tier");
  }
  if (request.n !== null && request.n !== undefined && request.n > 1) {
    throw GatewayError.invalidRequest("n must be 1: only one choice per request is supported", "n");
  }
  if (request.audio !== null && request.audio !== undefined) {
    throw GatewayError.invalidRequest("audio output is not supported", "audio");
  }
  if (request.modalities?.some((modality) => modality !== "text")) {
    throw GatewayError.invalidRequest('modalities may only contain "text"', "modalities");
  }
  if (request.top_logprobs !== null && request.top_logprobs !== undefined && request.logprobs !== true) {
    throw GatewayError.invalidRequest("top_logprobs requires logprobs: true", "top_logprobs");
  }
}
