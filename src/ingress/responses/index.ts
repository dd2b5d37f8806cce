/** The responses ingress format (`POST /api/v1/responses`, spec §2.4–2.5, §6.2). */
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { IngressFormat } from "../ingress-format.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

export const responsesFormat: IngressFormat = {
  name: "responses",
  decode: decodeResponsesRequest,
  encodeResult: encodeResponsesResult,
  createStreamEncoder: createResponsesStreamEncoder,
  encodeError: createCommonErrorEnvelope,
};

export type { ResponseObject, ResponsesEncodeContext } from "./create-response-object.js";
export { decodeResponsesRequest } from "./decode-request.js";
export { encodeResponsesResult } from "./encode-result.js";
export { responsesRequestSchema } from "./request-schema.js";
export { responsesResponseSchema } from "./response-schema.js";
export { createResponsesStreamEncoder } from "./stream-encoder.js";
