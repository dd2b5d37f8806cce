/** The responses ingress format (`POST /api/v1/responses`). */
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { IngressFormat } from "../ingress-format.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import type { ItemSeal } from "./item-seal.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

/**
 * With an `itemSeal`, item ids carry their items and `item_reference`s to them resolve
 * (item-seal.ts); without one, every `item_reference` is refused.
 */
export function createResponsesFormat(itemSeal?: ItemSeal): IngressFormat {
  return {
    name: "responses",
    decode: (body, headers) => decodeResponsesRequest(body, { itemSeal, headers }),
    encodeResult: (result, settlement, context) =>
      encodeResponsesResult(result, settlement, context, itemSeal),
    createStreamEncoder: (context) => createResponsesStreamEncoder(context, itemSeal),
    encodeError: createCommonErrorEnvelope,
  };
}

export const responsesFormat: IngressFormat = createResponsesFormat();

export type { ResponseObject, ResponsesEncodeContext } from "./create-response-object.js";
export { decodeResponsesRequest } from "./decode-request.js";
export { encodeResponsesResult } from "./encode-result.js";
export { createItemSeal, deriveItemSealKey, type ItemSeal } from "./item-seal.js";
export { responsesRequestSchema } from "./request-schema.js";
export { responsesResponseSchema } from "./response-schema.js";
export { createResponsesStreamEncoder } from "./stream-encoder.js";
