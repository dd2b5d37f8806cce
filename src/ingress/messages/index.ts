/**
 * The messages ingress format, Anthropic-compatible (`POST /api/v1/messages`,
 * `POST /api/v1/messages/count_tokens`). Its stored name is `anthropic_messages`.
 */
import { createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import type { IngressFormat } from "../ingress-format.js";
import { decodeMessagesRequest } from "./decode-request.js";
import { encodeMessagesResult } from "./encode-result.js";
import { createMessagesStreamEncoder } from "./stream-encoder.js";

export const messagesFormat: IngressFormat = {
  name: "anthropic_messages",
  decode: decodeMessagesRequest,
  encodeResult: encodeMessagesResult,
  createStreamEncoder: createMessagesStreamEncoder,
  encodeError: createMessagesErrorEnvelope,
};

export { countMessagesTokens } from "./count-messages-tokens.js";
export { decodeCountTokensRequest, decodeMessagesRequest } from "./decode-request.js";
export { encodeMessagesResult, type MessagesResponse } from "./encode-result.js";
export { MESSAGES_STOP_REASONS, mapStopReason } from "./map-stop-reason.js";
export { messagesCountTokensRequestSchema, messagesRequestSchema } from "./request-schema.js";
export {
  messagesCountTokensResponseSchema,
  messagesResponseSchema,
  messagesStreamEventSchema,
} from "./response-schema.js";
export { createMessagesStreamEncoder } from "./stream-encoder.js";
