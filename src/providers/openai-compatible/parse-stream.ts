/**
 * Chat Completions SSE chunks → canonical stream parts.
 *
 * Only choice 0 is read (the gateway never asks for n>1). Parts come out in strict lifecycles:
 * text and reasoning blocks never overlap, both are closed before tool calls open, tool calls
 * close when `finish_reason` arrives, and `usage` (from the usage-only final chunk, passed on as it
 * arrives) and `finish` come last; usage a host reports with content goes out with the first content. `response-metadata` is emitted just before the first content part, not on the first
 * chunk: until content exists a failure can still be thrown as a plain error (and retried).
 */
import type { CanonicalStreamPart, CanonicalUsage } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { createSequentialBlocks } from "../shared/block-tracker.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import { eachAsBatch, flattenBatches, parseEventBatches, readFrameObject } from "../shared/part-batches.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { createToolCallAccumulator } from "./accumulate-tool-calls.js";
import { mapFinishReason } from "./map-finish-reason.js";
import { mapUsage } from "./map-usage.js";
import { readReasoningText } from "./read-message-fields.js";
import type { ChatCompletionChunkWire, ChatMessageWire, ChatToolCallWire } from "./wire-types.js";

export interface ChatStreamParser {
  /** Folds one parsed chunk in; returns the parts it completes. */
  acceptChunk(chunk: ChatCompletionChunkWire): CanonicalStreamPart[];
  /**
   * Ends the stream: `usage` (when known) and `finish`. Throws a GatewayError when choice 0 never
   * got a `finish_reason` (the upstream stopped early).
   */
  finish(): CanonicalStreamPart[];
}

export function createChatStreamParser(): ChatStreamParser {
  let upstreamId: string | undefined;
  let upstreamModel: string | undefined;
  let metadataSent = false;
  const blocks = createSequentialBlocks();
  let hasRefusal = false;
  let rawFinishReason: string | undefined;
  let usage: CanonicalUsage | undefined;
  /** The usage last emitted as a part: `finish` repeats it only if it changed since. */
  let usageSent: CanonicalUsage | undefined;
  const toolCalls = createToolCallAccumulator();

  function withMetadata(parts: CanonicalStreamPart[]): CanonicalStreamPart[] {
    if (metadataSent || parts.length === 0) return parts;
    metadataSent = true;
    const metadata: CanonicalStreamPart = { type: "response-metadata", upstreamId, upstreamModel };
    // Hosts that count usage on every chunk: what is known goes out with the first content.
    if (usage === undefined || parts.some((part) => part.type === "usage")) return [metadata, ...parts];
    usageSent = usage;
    return [metadata, { type: "usage", usage }, ...parts];
  }

  return {
    acceptChunk(chunk) {
      // Azure's prompt-filter chunk carries `id: ""` and `model: ""`: keep the first real values.
      if (upstreamId === undefined && typeof chunk.id === "string" && chunk.id !== "") upstreamId = chunk.id;
      if (upstreamModel === undefined && typeof chunk.model === "string" && chunk.model !== "") {
        upstreamModel = chunk.model;
      }
      // Normal chunks say `"usage": null`; the usage-only final chunk has `choices: []`.
      if (typeof chunk.usage === "object" && chunk.usage !== null) usage = mapUsage(chunk.usage);

      type Choice = NonNullable<ChatCompletionChunkWire["choices"]>[number];
      const choice = readRecords<Choice>(chunk.choices).find((item) => (item.index ?? 0) === 0);
      if (rawFinishReason !== undefined && usage !== undefined && usage !== usageSent) {
        // The final usage chunk, after the finish reason: passed on at once, so a stream cut
        // before `[DONE]` is still billed what the upstream reported.
        usageSent = usage;
        return withMetadata([{ type: "usage", usage }]);
      }
      if (choice === undefined || rawFinishReason !== undefined) return [];
      const parts: CanonicalStreamPart[] = [];
      const delta: ChatMessageWire = isRecord(choice.delta) ? choice.delta : {};

      const reasoning = readReasoningText(delta);
      if (reasoning !== "") blocks.appendReasoning(parts, reasoning);
      if (typeof delta.content === "string" && delta.content !== "") blocks.appendText(parts, delta.content);
      if (typeof delta.refusal === "string" && delta.refusal !== "") {
        // A refusal is what the caller gets to read; the finish reason says it was one.
        hasRefusal = true;
        blocks.appendText(parts, delta.refusal);
      }
      const deltaToolCalls = readRecords<ChatToolCallWire>(delta.tool_calls);
      if (deltaToolCalls.length > 0) {
        blocks.closeText(parts);
        blocks.closeReasoning(parts);
        for (const toolCall of deltaToolCalls) parts.push(...toolCalls.accept(toolCall));
      }
      if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
        rawFinishReason = choice.finish_reason;
        blocks.closeText(parts);
        blocks.closeReasoning(parts);
        parts.push(...toolCalls.finish());
      }
      return withMetadata(parts);
    },

    finish() {
      if (rawFinishReason === undefined) {
        throw new GatewayError("provider_unavailable", "upstream stream ended early");
      }
      const parts: CanonicalStreamPart[] = [];
      if (usage !== undefined && usage !== usageSent) parts.push({ type: "usage", usage });
      parts.push({
        type: "finish",
        reason: mapFinishReason(rawFinishReason, { hasToolCalls: toolCalls.count > 0, hasRefusal }),
        rawReason: rawFinishReason,
      });
      return withMetadata(parts);
    },
  };
}

/**
 * Parses a Chat Completions event stream. Throws a GatewayError for an error frame, a frame that
 * is not JSON, or a stream that ends without a finish reason; errors of `events` (network,
 * deadlines, aborts) propagate unchanged. The caller decides whether a throw becomes an `error`
 * part (after the first part) or a plain error (before it).
 */
export function parseChatCompletionsStream(
  events: AsyncIterable<SseEvent>,
): AsyncGenerator<CanonicalStreamPart> {
  return flattenBatches(parseChatCompletionsBatches(eachAsBatch(events)));
}

/** parseChatCompletionsStream over batches of events: a batch of parts per batch of events. */
export function parseChatCompletionsBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
): AsyncGenerator<CanonicalStreamPart[]> {
  const parser = createChatStreamParser();
  return parseEventBatches(batches, {
    accept(event, out) {
      const data = event.data.trim();
      if (data === "[DONE]") return "break";
      const chunk = readFrameObject(data);
      if (chunk === undefined) return "more";
      // oai-node treats a truthy top-level `error` (or an `error` event) as a failure; so do we.
      if (event.event === "error" || (chunk as { error?: unknown }).error)
        throw classifyStreamErrorFrame(chunk);
      for (const part of parser.acceptChunk(chunk as ChatCompletionChunkWire)) out.push(part);
      return "more";
    },
    finish(out) {
      for (const part of parser.finish()) out.push(part);
    },
  });
}
