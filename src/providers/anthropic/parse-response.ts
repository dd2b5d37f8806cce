/** A non-streamed Anthropic `message` body → CanonicalResult. */
import type {
  CanonicalResult,
  NativeServerToolId,
  OpaqueReasoningState,
  ResultContent,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import { readRecords } from "../shared/read-wire-values.js";
import { PROVIDER_KIND } from "./convert-messages.js";
import { mapStopReason } from "./map-stop-reason.js";
import { mapUsage } from "./map-usage.js";
import {
  readBlockCitations,
  readServerToolBlockTool,
  readServerToolResult,
  readServerToolUse,
  type ServerToolBlockContext,
} from "./read-server-tool-blocks.js";
import type { AnthropicContentBlockWire, AnthropicMessageWire } from "./wire-types.js";

export interface AnthropicParseContext extends ServerToolBlockContext {
  /**
   * The upstream model the gateway asked for. Reasoning state is stamped with it (not with the
   * response's `model`, which may be a dated alias) so the next turn's route can recognise it.
   */
  upstreamModel: string;
  /** The structured-output tool, whose input is the answer text (see `convert-tools.ts`). */
  jsonToolName?: string;
}

/**
 * Maps the content blocks in order: `thinking` → reasoning with its signature as provider state,
 * `redacted_thinking` → reasoning with empty text and the data as state, `text`, `tool_use` →
 * tool-call with `JSON.stringify(input)` (or answer text for the structured-output tool), a text's
 * citations of search results onto it; the blocks of tools Anthropic ran for the request
 * (`server_tool_use`, `web_search_tool_result`, `web_fetch_tool_result`) → server-tool calls and
 * results (read-server-tool-blocks.ts). Other server-tool and unknown blocks are skipped. Throws a
 * GatewayError for an `error` envelope sent with HTTP 200 or a body that is not a message.
 */
export function parseAnthropicResponse(json: unknown, context: AnthropicParseContext): CanonicalResult {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new GatewayError("provider_unavailable", "The upstream provider returned an unexpected body");
  }
  const message = json as AnthropicMessageWire;
  if (message.type === "error" || (message.error !== undefined && message.error !== null)) {
    throw classifyStreamErrorFrame(message);
  }
  if (!Array.isArray(message.content)) {
    throw new GatewayError(
      "provider_unavailable",
      "The upstream provider returned a message without content",
    );
  }

  const content: ResultContent[] = [];
  let toolCallCount = 0;
  let jsonToolCount = 0;
  const inputs = new Map<string, Record<string, unknown>>();
  for (const block of readRecords<AnthropicContentBlockWire>(message.content)) {
    const mapped = convertBlock(block, context, inputs);
    if (mapped === undefined) continue;
    if (mapped.isJsonTool) jsonToolCount += 1;
    else if (mapped.content.type === "tool-call") toolCallCount += 1;
    content.push(mapped.content);
  }

  const rawFinishReason = typeof message.stop_reason === "string" ? message.stop_reason : undefined;
  const finishReason = mapStopReason(rawFinishReason, {
    onlyJsonResponseTool: jsonToolCount > 0 && toolCallCount === 0,
  });
  const stopSequence = typeof message.stop_sequence === "string" ? message.stop_sequence : undefined;
  return {
    content,
    ...(typeof message.id === "string" && message.id !== "" ? { upstreamId: message.id } : {}),
    ...(typeof message.model === "string" && message.model !== "" ? { upstreamModel: message.model } : {}),
    finishReason,
    ...(finishReason === "stop-sequence" && stopSequence !== undefined ? { stopSequence } : {}),
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: mapUsage(message.usage),
  };
}

function convertBlock(
  block: AnthropicContentBlockWire,
  context: AnthropicParseContext,
  inputs: Map<string, Record<string, unknown>>,
): { content: ResultContent; isJsonTool: boolean } | undefined {
  const native = readServerToolBlockTool(block as Record<string, unknown>, context);
  if (native !== undefined)
    return { content: convertNativeBlock(block, native, context, inputs), isJsonTool: false };
  switch (block.type) {
    case "text": {
      if (typeof block.text !== "string" || block.text === "") return undefined;
      const citations =
        (context.nativeTools?.size ?? 0) === 0 ? [] : readBlockCitations(block.citations, block.text.length);
      return {
        content: { type: "text", text: block.text, ...(citations.length === 0 ? {} : { citations }) },
        isJsonTool: false,
      };
    }
    case "thinking":
      return {
        content: {
          type: "reasoning",
          text: typeof block.thinking === "string" ? block.thinking : "",
          providerState: createReasoningState(context, {
            signature: typeof block.signature === "string" ? block.signature : "",
          }),
        },
        isJsonTool: false,
      };
    case "redacted_thinking":
      return {
        content: {
          type: "reasoning",
          text: "",
          providerState: createReasoningState(context, {
            redactedData: typeof block.data === "string" ? block.data : "",
          }),
        },
        isJsonTool: false,
      };
    case "tool_use": {
      const input = JSON.stringify(block.input ?? {});
      if (context.jsonToolName !== undefined && block.name === context.jsonToolName) {
        return { content: { type: "text", text: input }, isJsonTool: true };
      }
      return {
        content: {
          type: "tool-call",
          id: typeof block.id === "string" ? block.id : "",
          name: typeof block.name === "string" ? block.name : "",
          arguments: input,
        },
        isJsonTool: false,
      };
    }
    default:
      return undefined;
  }
}

/** A block of a tool Anthropic ran: its call (whose input its result will need) or its result. */
function convertNativeBlock(
  block: AnthropicContentBlockWire,
  tool: NativeServerToolId,
  context: AnthropicParseContext,
  inputs: Map<string, Record<string, unknown>>,
): ResultContent {
  const record = block as Record<string, unknown>;
  if (block.type === "server_tool_use") {
    const { call, providerState } = readServerToolUse(record, tool, context);
    if (typeof block.id === "string") inputs.set(block.id, call.input);
    return { type: "server-tool-call", call, providerState };
  }
  const callInput = typeof block.tool_use_id === "string" ? inputs.get(block.tool_use_id) : undefined;
  const { result, providerState } = readServerToolResult(record, tool, callInput, context);
  return { type: "server-tool-result", result, providerState };
}

export function createReasoningState(
  context: AnthropicParseContext,
  state: { signature?: string; redactedData?: string },
): OpaqueReasoningState {
  return { providerKind: PROVIDER_KIND, upstreamModel: context.upstreamModel, ...state };
}
