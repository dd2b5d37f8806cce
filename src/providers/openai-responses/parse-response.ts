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
import { readMessageCitations, readWebSearchCall } from "./read-web-search-items.js";
import type { ResponsesOutputItemWire, ResponseWire } from "./wire-types.js";

export interface ResponsesParseContext {
  /** The upstream model the gateway asked for; state is bound to it. */
  upstreamModel: string;
  /** The request sent `web_search` as OpenAI's own tool: its items and citations are mapped. */
  nativeSearch?: boolean;
}

/**
 * Output items in order: reasoning → a reasoning part (summary text, state for the next turn),
 * message → text (with its `url_citation`s when OpenAI searched for the request), function_call →
 * tool call (`call_id` as the id, its `namespace` kept), custom_tool_call → a tool call marked
 * `custom` whose arguments are `{"input": <text>}`, `web_search_call` → a server-tool call and its result when the
 * request sent the search natively (read-web-search-items.ts). Other hosted tools' items have no
 * canonical form and are skipped. Throws a GatewayError for a failed response or a body that is
 * not a response.
 */
export function parseResponsesResponse(json: unknown, context: ResponsesParseContext): CanonicalResult {
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
    content,
    ...(typeof response.id === "string" && response.id !== "" ? { upstreamId: response.id } : {}),
    ...(typeof response.model === "string" && response.model !== "" ? { upstreamModel: response.model } : {}),
    finishReason: mapResponsesFinishReason(response.status, incompleteReason, { hasToolCalls, hasRefusal }),
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: mapResponsesUsage(response.usage),
  };
}

function convertOutputItem(
  item: ResponsesOutputItemWire,
  context: ResponsesParseContext,
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
      if (text === "") return [];
      const citations = context.nativeSearch === true ? readMessageCitations(item, text.length) : [];
      return [{ type: "text", text, ...(citations.length === 0 ? {} : { citations }) }];
    }
    case "function_call":
    case "custom_tool_call":
      return [{ type: "tool-call", ...readFunctionCall(item) }];
    case "web_search_call": {
      if (context.nativeSearch !== true) return [];
      const { call, providerState, result } = readWebSearchCall(item, context.upstreamModel);
      return [
        { type: "server-tool-call", call, providerState },
        { type: "server-tool-result", result },
      ];
    }
    default:
      return [];
  }
}
