/**
 * A canonical result → the `chat.completion` object. Server-tool calls and results have no place in
 * this format and are not rendered; what they leave visible is the `url_citation` annotations of
 * the answer's text and the generated images, in `images` (encode-chat-image.ts).
 */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
import { type ChatImage, encodeChatImage } from "./encode-chat-image.js";
import { type ChatUrlCitationAnnotation, encodeUrlCitation } from "./encode-url-citation.js";
import { type ChatUsage, encodeChatUsage } from "./encode-usage.js";
import { type ChatFinishReason, mapFinishReason } from "./map-finish-reason.js";
import { type ChatReasoningDetail, encodeReasoningDetails } from "./reasoning-details.js";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  /**
   * Always null: no upstream's fingerprint is carried. OpenAI sends the key and strict client
   * schemas (@openrouter/sdk) require it on the completion (never on chunks).
   */
  system_fingerprint: null;
  choices: Array<{
    index: 0;
    message: {
      role: "assistant";
      content: string | null;
      /** Always null: refusals arrive as text with finish_reason content_filter. OpenAI sends the key. */
      refusal: null;
      reasoning?: string;
      reasoning_details?: ChatReasoningDetail[];
      tool_calls?: ChatToolCall[];
      /** Present only when the text cites a source; offsets index into `content`. */
      annotations?: ChatUrlCitationAnnotation[];
      /** Present only when the image server tool made images, in the order they were made. */
      images?: ChatImage[];
    };
    finish_reason: ChatFinishReason;
    logprobs: null;
  }>;
  usage: ChatUsage;
}

export function encodeChatResult(
  result: CanonicalResult,
  settlement: Settlement,
  context: EncodeContext,
): ChatCompletion {
  let text: string | null = null;
  let reasoning = "";
  const toolCalls: ChatToolCall[] = [];
  const annotations: ChatUrlCitationAnnotation[] = [];
  const images: ChatImage[] = [];
  for (const part of result.content) {
    if (part.type === "text") {
      // A citation's offsets index into its own text entry; `content` joins the entries, so they
      // shift by the length of the text before this entry (UTF-16 units, as string length counts).
      const offset = text?.length ?? 0;
      for (const citation of part.citations ?? []) annotations.push(encodeUrlCitation(citation, offset));
      text = (text ?? "") + part.text;
    } else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool-call")
      toolCalls.push({
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: part.arguments },
      });
    else if (part.type === "server-tool-result") {
      const image = encodeChatImage(part.result);
      if (image !== undefined) images.push(image);
    }
  }
  const message: ChatCompletion["choices"][0]["message"] = {
    role: "assistant",
    content: text,
    refusal: null,
  };
  if (reasoning) message.reasoning = reasoning;
  const reasoningDetails = encodeReasoningDetails(result.content);
  if (reasoningDetails.length > 0) message.reasoning_details = reasoningDetails;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (annotations.length > 0) message.annotations = annotations;
  if (images.length > 0) message.images = images;
  return {
    id: `gen-${context.requestId}`,
    object: "chat.completion",
    created: context.createdAt,
    model: context.model,
    system_fingerprint: null,
    choices: [{ index: 0, message, finish_reason: mapFinishReason(result.finishReason), logprobs: null }],
    usage: encodeChatUsage(settlement.usage, settlement.costMicroUsd),
  };
}
