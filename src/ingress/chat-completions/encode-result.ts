/** A canonical result → the `chat.completion` object. */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
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
  for (const part of result.content) {
    if (part.type === "text") text = (text ?? "") + part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool-call")
      toolCalls.push({
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: part.arguments },
      });
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
  return {
    id: `gen-${context.requestId}`,
    object: "chat.completion",
    created: context.createdAt,
    model: context.model,
    choices: [{ index: 0, message, finish_reason: mapFinishReason(result.finishReason), logprobs: null }],
    usage: encodeChatUsage(settlement.usage, settlement.costMicroUsd),
  };
}
