/**
 * A canonical result → the `message` object.
 *
 * Blocks keep generation order — the order the stream encoder emits them in, so a streamed and a
 * non-streamed turn are the same message. For reasoning models that puts thinking first (they think
 * before answering), then text, then tool_use. Adjacent text parts are one block: the fold that
 * produced the result may have split a text block, and Anthropic sends one. A tool call's own
 * provider state follows the run of tool_use blocks it belongs to in a carrier thinking block
 * (tool-call-state-carrier.ts), so the calls of a turn stay together.
 *
 * Server tools (encode-server-tool-blocks.ts): each call and result is a block where it happened (a
 * generated image an `image` block);
 * text on either side of one stays two blocks, even for a tool that renders no block (`datetime`),
 * because the stream shows them as two. A text entry's citations ride on its block: Anthropic's
 * web-search citation has no offsets, so the block's citations cite somewhere in its text.
 */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
import { encodeReasoningBlock, type MessagesReasoningBlock } from "./encode-reasoning-block.js";
import {
  encodeCitation,
  encodeServerToolResultBlock,
  encodeServerToolUseBlock,
  type GeneratedImageBlock,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
  type WebSearchResultLocation,
} from "./encode-server-tool-blocks.js";
import { encodeMessagesUsage, type MessagesUsage } from "./encode-usage.js";
import { type MessagesStopReason, mapStopReason } from "./map-stop-reason.js";
import { parseToolInput } from "./parse-tool-input.js";
import { createCarrierState } from "./tool-call-state-carrier.js";

export type MessagesContentBlock =
  | { type: "text"; text: string; citations?: WebSearchResultLocation[] }
  | MessagesReasoningBlock
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | ServerToolUseBlock
  | ServerToolResultBlock
  | GeneratedImageBlock;

export interface MessagesResponse {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export function encodeMessagesResult(
  result: CanonicalResult,
  settlement: Settlement,
  context: EncodeContext,
): MessagesResponse {
  const content: MessagesContentBlock[] = [];
  /** Carriers of the current run of tool_use blocks, placed after it. */
  let carriers: MessagesContentBlock[] = [];
  /** The last block, while it is text that later text may extend. */
  let openText: Extract<MessagesContentBlock, { type: "text" }> | undefined;
  const push = (block: MessagesContentBlock) => {
    content.push(...carriers, block);
    carriers = [];
    openText = undefined;
  };
  for (const part of result.content) {
    if (part.type === "text") {
      const citations = part.citations?.map(encodeCitation) ?? [];
      if (part.text === "" && citations.length === 0) continue;
      // A block's citations speak for all of its text: cited text is never joined with other text.
      if (openText !== undefined && (openText.citations !== undefined || citations.length > 0)) {
        openText = undefined;
      }
      if (openText === undefined) {
        const block: MessagesContentBlock = { type: "text", text: "" };
        push(block);
        openText = block;
      }
      openText.text += part.text;
      if (citations.length > 0) openText.citations = [...(openText.citations ?? []), ...citations];
    } else if (part.type === "reasoning") {
      const block = encodeReasoningBlock(part.text, part.providerState);
      if (block !== undefined) push(block);
    } else if (part.type === "tool-call") {
      content.push({ type: "tool_use", id: part.id, name: part.name, input: parseToolInput(part.arguments) });
      openText = undefined;
      if (part.providerState !== undefined) {
        const carrier = encodeReasoningBlock("", createCarrierState(part.providerState, part.id));
        if (carrier !== undefined) carriers.push(carrier);
      }
    } else {
      // A server-tool call or result ends the text before it even when it renders no block.
      openText = undefined;
      const block =
        part.type === "server-tool-call"
          ? encodeServerToolUseBlock(part.call)
          : encodeServerToolResultBlock(part.result);
      if (block !== undefined) push(block);
    }
  }
  content.push(...carriers);
  return {
    id: `msg_${context.requestId}`,
    type: "message",
    role: "assistant",
    model: context.model,
    content,
    stop_reason: mapStopReason(result.finishReason),
    stop_sequence: result.finishReason === "stop-sequence" ? (result.stopSequence ?? null) : null,
    usage: encodeMessagesUsage(settlement.usage, settlement.serverToolCalls),
  };
}
