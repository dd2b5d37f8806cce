/**
 * A canonical result → the `message` object.
 *
 * Blocks keep generation order — the order the stream encoder emits them in, so a streamed and a
 * non-streamed turn are the same message. For reasoning models that puts thinking first (they think
 * before answering), then text, then tool_use. Adjacent text parts are one block: the fold that
 * produced the result may have split a text block, and Anthropic sends one. A tool call's own
 * provider state follows the run of tool_use blocks it belongs to in a carrier thinking block
 * (tool-call-state-carrier.ts), so the calls of a turn stay together.
 */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
import { encodeReasoningBlock, type MessagesReasoningBlock } from "./encode-reasoning-block.js";
import { encodeMessagesUsage, type MessagesUsage } from "./encode-usage.js";
import { type MessagesStopReason, mapStopReason } from "./map-stop-reason.js";
import { parseToolInput } from "./parse-tool-input.js";
import { createCarrierState } from "./tool-call-state-carrier.js";

export type MessagesContentBlock =
  | { type: "text"; text: string }
  | MessagesReasoningBlock
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

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
  const push = (block: MessagesContentBlock) => {
    content.push(...carriers, block);
    carriers = [];
  };
  for (const part of result.content) {
    if (part.type === "text") {
      if (part.text === "") continue;
      const previous = content[content.length - 1];
      if (previous?.type === "text" && carriers.length === 0) previous.text += part.text;
      else push({ type: "text", text: part.text });
    } else if (part.type === "reasoning") {
      const block = encodeReasoningBlock(part.text, part.providerState);
      if (block !== undefined) push(block);
    } else if (part.type === "tool-call") {
      content.push({ type: "tool_use", id: part.id, name: part.name, input: parseToolInput(part.arguments) });
      if (part.providerState !== undefined) {
        const carrier = encodeReasoningBlock("", createCarrierState(part.providerState, part.id));
        if (carrier !== undefined) carriers.push(carrier);
      }
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
    usage: encodeMessagesUsage(settlement.usage),
  };
}
