/**
 * Fields the responses ingress rejects rather than ignores:
 * the gateway is stateless, so anything that refers to server-side state would silently give the
 * caller something other than what they asked for. Each rejection is `invalid_request` with `param`
 * naming the field; `null` (and `false` for the booleans) counts as absent.
 */
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponsesRequestBody } from "./request-schema.js";

const STATELESS_HINT = "the gateway keeps no state; send the full conversation in input";

export function rejectUnsupportedFields(request: ResponsesRequestBody): void {
  if (isSet(request.previous_response_id)) {
    throw GatewayError.invalidRequest(
      `previous_response_id is not supported: ${STATELESS_HINT}`,
      "previous_response_id",
    );
  }
  if (request.store === true) {
    throw GatewayError.invalidRequest(`store: true is not supported: ${STATELESS_HINT}`, "store");
  }
  if (request.background === true) {
    throw GatewayError.invalidRequest(
      "background: true is not supported: responses are not stored",
      "background",
    );
  }
  if (isSet(request.conversation)) {
    throw GatewayError.invalidRequest(`conversation is not supported: ${STATELESS_HINT}`, "conversation");
  }
  if (isSet(request.prompt)) {
    throw GatewayError.invalidRequest("prompt is not supported: stored prompts are not available", "prompt");
  }
  if (isSet(request.stop)) {
    throw GatewayError.invalidRequest("stop sequences are not expressible in the responses format", "stop");
  }
}

function isSet(value: unknown): boolean {
  return value !== null && value !== undefined;
}
