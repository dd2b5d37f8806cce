/** The chat-completions ingress format (`POST /api/v1/chat/completions`). */
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { IngressFormat } from "../ingress-format.js";
import { decodeChatRequest } from "./decode-request.js";
import { encodeChatResult } from "./encode-result.js";
import { createChatStreamEncoder } from "./stream-encoder.js";

export const chatCompletionsFormat: IngressFormat = {
  name: "chat_completions",
  decode: decodeChatRequest,
  encodeResult: encodeChatResult,
  createStreamEncoder: createChatStreamEncoder,
  encodeError: createCommonErrorEnvelope,
};

export { decodeChatRequest } from "./decode-request.js";
export { encodeChatResult } from "./encode-result.js";
export { createChatStreamEncoder } from "./stream-encoder.js";
