/** A non-streamed `chat.completion` body → CanonicalResult. */
import type { CanonicalResult, ResultContent } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import { mapFinishReason } from "./map-finish-reason.js";
import { mapUsage } from "./map-usage.js";
import { createToolCallId, normalizeArguments, readReasoningText } from "./read-message-fields.js";
import type { ChatCompletionWire, ChatMessageWire, ChatToolCallWire } from "./wire-types.js";

/**
 * Reads `choices[0]` (the gateway never asks for n>1). Throws a GatewayError for a body that is
 * not a completion: an `error` envelope sent with HTTP 200 or a body without choices.
 */
export function parseChatCompletionsResponse(json: unknown): CanonicalResult {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned an unexpected body");
  }
  const completion = json as ChatCompletionWire;
  if (completion.error !== undefined && completion.error !== null) throw classifyStreamErrorFrame(completion);
  type Choice = NonNullable<ChatCompletionWire["choices"]>[number];
  const choice = readRecords<Choice>(completion.choices).find((item) => (item.index ?? 0) === 0);
  if (choice === undefined) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned no choices");
  }

  const message: ChatMessageWire = isRecord(choice.message) ? choice.message : {};
  const content: ResultContent[] = [];
  const reasoning = readReasoningText(message);
  if (reasoning !== "") content.push({ type: "reasoning", text: reasoning });
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  const text = refusal ?? (typeof message.content === "string" ? message.content : "");
  if (text !== "") content.push({ type: "text", text });
  for (const call of readRecords<ChatToolCallWire>(message.tool_calls)) {
    const name = isRecord(call.function) ? call.function.name : undefined;
    content.push({
      type: "tool-call",
      id: typeof call.id === "string" && call.id !== "" ? call.id : createToolCallId(),
      name: typeof name === "string" ? name : "",
      arguments: normalizeArguments(isRecord(call.function) ? call.function.arguments : undefined),
    });
  }

  const rawFinishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : undefined;
  const hasToolCalls = content.some((part) => part.type === "tool-call");
  const finishReason =
    refusal !== undefined && !hasToolCalls
      ? "refusal"
      : mapFinishReason(rawFinishReason, { hasToolCalls, hasRefusal: false });
  return {
    content,
    ...(typeof completion.id === "string" && completion.id !== "" ? { upstreamId: completion.id } : {}),
    ...(typeof completion.model === "string" && completion.model !== ""
      ? { upstreamModel: completion.model }
      : {}),
    finishReason,
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: mapUsage(completion.usage),
  };
}
