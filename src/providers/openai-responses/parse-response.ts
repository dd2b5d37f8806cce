/** A non-streamed Responses body (`object: "response"`) → CanonicalResult. */
import type { CanonicalResult, ResultContent } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { classifyResponseError } from "./classify-response-error.js";
import { mapResponsesFinishReason, readRawFinishReason } from "./map-finish-reason.js";
import { mapResponsesUsage } from "./map-usage.js";
import {
  readFunctionCall,
  readMessageText,
  readReasoningState,
  readReasoningText,
} from "./read-output-items.js";
import type { ResponsesOutputItemWire, ResponseWire } from "./wire-types.js";

/**
 * Output items in order: reasoning → a reasoning part (summary text, state for the next turn),
 * message → text, function_call → tool call (`call_id` as the id). Items of hosted tools
 * (web search and the like) have no canonical form and are skipped. Throws a GatewayError for a
 * failed response or a body that is not a response.
 */
export function parseResponsesResponse(json: unknown, context: { upstreamModel: string }): CanonicalResult {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned an unexpected body");
  }
  const response = json as ResponseWire;
  if (response.status === "failed" || (response.error !== null && response.error !== undefined)) {
    throw classifyResponseError(response.error);
  }
  if (!Array.isArray(response.output)) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned no output");
  }

  const content: ResultContent[] = [];
  let hasRefusal = false;
  for (const item of response.output)
    content.push(...convertOutputItem(item, context, () => (hasRefusal = true)));

  const hasToolCalls = content.some((part) => part.type === "tool-call");
  const incompleteReason = response.incomplete_details?.reason;
  const rawFinishReason = readRawFinishReason(response.status, incompleteReason);
  return {
    ...(typeof response.id === "string" && response.id !== "" ? { upstreamId: response.id } : {}),
    ...(typeof response.model === "string" && response.model !== "" ? { upstreamModel: response.model } : {}),
    content,
    finishReason: mapResponsesFinishReason(response.status, incompleteReason, { hasToolCalls, hasRefusal }),
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: mapResponsesUsage(response.usage),
  };
}

function convertOutputItem(
  item: ResponsesOutputItemWire,
  context: { upstreamModel: string },
  onRefusal: () => void,
): ResultContent[] {
  switch (item?.type) {
    case "reasoning": {
      const text = readReasoningText(item);
      const providerState = readReasoningState(item, context.upstreamModel);
      if (text === "" && providerState === undefined) return [];
      return [{ type: "reasoning", text, ...(providerState === undefined ? {} : { providerState }) }];
    }
    case "message": {
      const { text, refusal } = readMessageText(item);
      if (refusal) onRefusal();
      return text === "" ? [] : [{ type: "text", text }];
    }
    case "function_call":
      return [{ type: "tool-call", ...readFunctionCall(item) }];
    default:
      return [];
  }
}
