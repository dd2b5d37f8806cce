/**
 * Anthropic Messages SSE events → canonical stream parts.
 *
 * Content blocks arrive strictly one after another (`content_block_start → delta* → stop`), and
 * map onto part lifecycles one to one:
 * - `text` → text-start/delta/end; the start waits for the first non-empty delta, so an empty
 *   block never becomes a phantom empty text part;
 * - `thinking` → reasoning-start/delta/end; the `signature_delta` is kept and delivered on
 *   reasoning-end's provider state (a signature-only block, e.g. with display "omitted", still
 *   round-trips with empty text);
 * - `redacted_thinking` (complete at start, no deltas) → reasoning-start/end with the data as state;
 * - `tool_use` → tool-input-start (index = order among this turn's tool_use blocks), one
 *   tool-input-delta per `input_json_delta`, then tool-input-end and tool-call whose arguments are
 *   the concatenated fragments (`""`, a no-argument call, becomes `{}`);
 * - the structured-output tool (`convert-tools.ts`) streams as answer text instead;
 * - blocks of tools Anthropic ran for the request (read-server-tool-blocks.ts): `server_tool_use`
 *   → `server-tool-call` once its input is complete (at its stop), a result block (whole at its
 *   start) → `server-tool-result` at its stop; a text block's `citations_delta`s → `citation`
 *   parts of the whole block, just before its `text-end`;
 * - other server-tool and unknown blocks are skipped, with their deltas.
 * `message_delta.usage` is cumulative: each field's last value wins, `message_start`'s value stays
 * when a delta omits it. The usage known so far goes out with the first content (a partial count:
 * the prompt), the final `usage` and `finish` at `message_stop`, and nothing after it is read. `ping` is ignored. `response-metadata` is emitted just before the first content part,
 * so a failure before any content can still be thrown as a plain error.
 */
import { randomUUID } from "node:crypto";
import type { CanonicalStreamPart, NativeServerToolId } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import {
  appendToContentBlock,
  type ContentBlock,
  createContentBlock,
  endContentBlock,
  startContentBlock,
} from "../shared/block-tracker.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import { eachAsBatch, flattenBatches, parseEventBatches, readFrameObject } from "../shared/part-batches.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { mapStopReason } from "./map-stop-reason.js";
import { mapUsage, mergeUsage } from "./map-usage.js";
import { type AnthropicParseContext, createReasoningState } from "./parse-response.js";
import {
  readBlockCitations,
  readServerToolBlockTool,
  readServerToolResult,
  readServerToolUse,
} from "./read-server-tool-blocks.js";
import type {
  AnthropicContentBlockWire,
  AnthropicStreamEventWire,
  AnthropicUsageWire,
} from "./wire-types.js";

type OpenBlock =
  /**
   * `textLength`: what a citation of the block spans (its text is never kept: a stream may be
   * long); `citations` collects only while the provider runs tools, at most MAX_BLOCK_CITATIONS.
   */
  | { kind: "text"; content: ContentBlock; textLength: number; citations: unknown[] }
  | { kind: "server-call"; tool: NativeServerToolId; block: Record<string, unknown>; json: string }
  | { kind: "server-result"; tool: NativeServerToolId; block: Record<string, unknown> }
  | { kind: "json"; content: ContentBlock; initialInput: unknown }
  | { kind: "reasoning"; content: ContentBlock; signature: string }
  | { kind: "redacted"; content: ContentBlock; data: string }
  /** `arguments`: the streamed fragments, joined once at the block's stop. */
  | { kind: "tool"; id: string; index: number; name: string; arguments: string[]; initialInput: unknown }
  | { kind: "ignored" };

export interface AnthropicStreamParser {
  /** Folds one parsed event in; returns the parts it completes. Throws for an `error` event. */
  acceptEvent(event: AnthropicStreamEventWire): CanonicalStreamPart[];
  /** True once `message_stop` arrived; later events must not be fed. */
  readonly done: boolean;
}

export function createAnthropicStreamParser(context: AnthropicParseContext): AnthropicStreamParser {
  let upstreamId: string | undefined;
  let upstreamModel: string | undefined;
  let messageStarted = false;
  let metadataSent = false;
  let done = false;
  let usage: AnthropicUsageWire | undefined;
  let stopReason: string | undefined;
  let stopSequence: string | undefined;
  let toolCount = 0;
  let jsonToolCount = 0;
  const blocks = new Map<number, OpenBlock>();
  /** Inputs of this response's server-tool calls, for their results. */
  const serverInputs = new Map<string, Record<string, unknown>>();

  function withMetadata(parts: CanonicalStreamPart[]): CanonicalStreamPart[] {
    if (metadataSent || parts.length === 0) return parts;
    metadataSent = true;
    const metadata: CanonicalStreamPart = { type: "response-metadata", upstreamId, upstreamModel };
    // message_start's usage (the prompt's count) goes out with the first content, so a stream
    // that ends before message_stop is billed the prompt the upstream reported.
    if (usage === undefined || parts.some((part) => part.type === "usage")) return [metadata, ...parts];
    return [metadata, { type: "usage", usage: mapUsage(usage) }, ...parts];
  }

  function openBlock(
    index: number,
    contentBlock: AnthropicContentBlockWire,
    parts: CanonicalStreamPart[],
  ): void {
    // Blocks never overlap on the wire; should a relay skip a stop, the open one is closed first.
    for (const openIndex of [...blocks.keys()]) closeBlock(openIndex, parts);
    const native = readServerToolBlockTool(contentBlock as Record<string, unknown>, context);
    if (native !== undefined) {
      const block = contentBlock as Record<string, unknown>;
      blocks.set(
        index,
        contentBlock.type === "server_tool_use"
          ? { kind: "server-call", tool: native, block, json: "" }
          : { kind: "server-result", tool: native, block },
      );
      return;
    }
    switch (contentBlock.type) {
      case "text": {
        const block = createContentBlock("text", `text-${index}`);
        const initial = Array.isArray(contentBlock.citations)
          ? contentBlock.citations.slice(0, MAX_BLOCK_CITATIONS)
          : [];
        blocks.set(index, {
          kind: "text",
          content: block,
          textLength: readString(contentBlock.text).length,
          citations: initial,
        });
        appendString(block, contentBlock.text, parts);
        return;
      }
      case "thinking": {
        const block = createContentBlock("reasoning", `reasoning-${index}`);
        blocks.set(index, {
          kind: "reasoning",
          content: block,
          signature: readString(contentBlock.signature),
        });
        startContentBlock(block, parts);
        appendToContentBlock(block, readString(contentBlock.thinking), parts);
        return;
      }
      case "redacted_thinking": {
        const block = createContentBlock("reasoning", `reasoning-${index}`);
        blocks.set(index, { kind: "redacted", content: block, data: readString(contentBlock.data) });
        startContentBlock(block, parts);
        return;
      }
      case "tool_use": {
        if (context.jsonToolName !== undefined && contentBlock.name === context.jsonToolName) {
          jsonToolCount += 1;
          blocks.set(index, {
            kind: "json",
            content: createContentBlock("text", `text-${index}`),
            initialInput: contentBlock.input,
          });
          return;
        }
        const id = readString(contentBlock.id) || `toolu_gw${randomUUID().replaceAll("-", "")}`;
        const name = readString(contentBlock.name);
        const toolIndex = toolCount++;
        blocks.set(index, {
          kind: "tool",
          id,
          index: toolIndex,
          name,
          arguments: [],
          initialInput: contentBlock.input,
        });
        parts.push({ type: "tool-input-start", id, index: toolIndex, name });
        return;
      }
      default:
        blocks.set(index, { kind: "ignored" });
    }
  }

  /** A wire string appended to a text or reasoning block (anything else is ignored). */
  function appendString(block: ContentBlock, text: unknown, parts: CanonicalStreamPart[]): void {
    if (typeof text === "string") appendToContentBlock(block, text, parts);
  }

  function acceptDelta(event: AnthropicStreamEventWire, parts: CanonicalStreamPart[]): void {
    const block = typeof event.index === "number" ? blocks.get(event.index) : undefined;
    const delta = event.delta;
    if (block === undefined || delta === null || delta === undefined) return;
    switch (block.kind) {
      case "text":
        if (delta.type === "text_delta" && typeof delta.text === "string") {
          block.textLength += delta.text.length;
          appendString(block.content, delta.text, parts);
        } else if (
          delta.type === "citations_delta" &&
          delta.citation !== undefined &&
          block.citations.length < MAX_BLOCK_CITATIONS &&
          (context.nativeTools?.size ?? 0) > 0
        ) {
          block.citations.push(delta.citation);
        }
        return;
      case "server-call":
        // A search query or URL is short; past the bound the block's own input stands.
        if (
          delta.type === "input_json_delta" &&
          typeof delta.partial_json === "string" &&
          block.json.length + delta.partial_json.length <= MAX_SERVER_INPUT_CHARS
        ) {
          block.json += delta.partial_json;
        }
        return;
      case "json":
        if (delta.type === "input_json_delta") appendString(block.content, delta.partial_json, parts);
        return;
      case "reasoning":
        if (delta.type === "thinking_delta") {
          appendString(block.content, delta.thinking, parts);
        } else if (delta.type === "signature_delta" && typeof delta.signature === "string") {
          // One signature_delta per block; like ant-sdk, a later one replaces an earlier one.
          block.signature = delta.signature;
        }
        return;
      case "tool":
        if (
          delta.type === "input_json_delta" &&
          typeof delta.partial_json === "string" &&
          delta.partial_json !== ""
        ) {
          block.arguments.push(delta.partial_json);
          parts.push({ type: "tool-input-delta", id: block.id, delta: delta.partial_json });
        }
        return;
      default:
        return;
    }
  }

  function closeBlock(index: number, parts: CanonicalStreamPart[]): void {
    const block = blocks.get(index);
    if (block === undefined) return;
    blocks.delete(index);
    switch (block.kind) {
      case "text":
        if (block.content.started && (context.nativeTools?.size ?? 0) > 0) {
          for (const citation of readBlockCitations(block.citations, block.textLength)) {
            parts.push({ type: "citation", id: block.content.id, citation });
          }
        }
        endContentBlock(block.content, parts);
        return;
      case "server-call": {
        // The input streams as JSON text; the block's record carries it whole.
        const use = { ...block.block };
        use.input = parseInputObject(block.json) ?? block.block.input;
        const { call, providerState } = readServerToolUse(use, block.tool, context);
        if (typeof block.block.id === "string") serverInputs.set(block.block.id, call.input);
        parts.push({ type: "server-tool-call", call, providerState });
        return;
      }
      case "server-result": {
        const callInput =
          typeof block.block.tool_use_id === "string" ? serverInputs.get(block.block.tool_use_id) : undefined;
        const { result, providerState } = readServerToolResult(block.block, block.tool, callInput, context);
        parts.push({ type: "server-tool-result", result, providerState });
        return;
      }
      case "json":
        // A relay may deliver the whole input at start without deltas.
        if (!block.content.started)
          appendToContentBlock(block.content, stringifyInput(block.initialInput), parts);
        endContentBlock(block.content, parts);
        return;
      case "reasoning":
        endContentBlock(block.content, parts, createReasoningState(context, { signature: block.signature }));
        return;
      case "redacted":
        endContentBlock(block.content, parts, createReasoningState(context, { redactedData: block.data }));
        return;
      case "tool": {
        let args = block.arguments.join("");
        if (args === "") {
          args = stringifyInput(block.initialInput);
          parts.push({ type: "tool-input-delta", id: block.id, delta: args });
        }
        parts.push({ type: "tool-input-end", id: block.id });
        parts.push({
          type: "tool-call",
          id: block.id,
          index: block.index,
          name: block.name,
          arguments: args,
        });
        return;
      }
      default:
        return;
    }
  }

  function finishMessage(parts: CanonicalStreamPart[]): void {
    for (const openIndex of [...blocks.keys()]) closeBlock(openIndex, parts);
    if (usage !== undefined) parts.push({ type: "usage", usage: mapUsage(usage) });
    const reason = mapStopReason(stopReason, { onlyJsonResponseTool: jsonToolCount > 0 && toolCount === 0 });
    parts.push({
      type: "finish",
      reason,
      ...(reason === "stop-sequence" && stopSequence !== undefined ? { stopSequence } : {}),
      ...(stopReason === undefined ? {} : { rawReason: stopReason }),
    });
  }

  return {
    get done() {
      return done;
    },
    acceptEvent(event) {
      if (done) return [];
      const parts: CanonicalStreamPart[] = [];
      switch (event.type) {
        case "message_start": {
          // ant-sdk rejects a second message_start; a relay that concatenates two turns is broken.
          if (messageStarted)
            throw new GatewayError("provider_unavailable", "The upstream stream started twice");
          messageStarted = true;
          const message = event.message ?? {};
          if (typeof message.id === "string" && message.id !== "") upstreamId = message.id;
          if (typeof message.model === "string" && message.model !== "") upstreamModel = message.model;
          usage = mergeUsage(usage, message.usage);
          break;
        }
        case "content_block_start":
          if (typeof event.index === "number" && event.content_block) {
            openBlock(event.index, event.content_block, parts);
          }
          break;
        case "content_block_delta":
          acceptDelta(event, parts);
          break;
        case "content_block_stop":
          if (typeof event.index === "number") closeBlock(event.index, parts);
          break;
        case "message_delta":
          if (typeof event.delta?.stop_reason === "string") stopReason = event.delta.stop_reason;
          if (typeof event.delta?.stop_sequence === "string") stopSequence = event.delta.stop_sequence;
          usage = mergeUsage(usage, event.usage);
          break;
        case "message_stop":
          done = true;
          finishMessage(parts);
          break;
        case "error":
          throw classifyStreamErrorFrame(event);
        default:
          // `ping` and event types added later: tolerated, as the streaming docs require.
          break;
      }
      return withMetadata(parts);
    },
  };
}

/**
 * Parses an Anthropic event stream. Throws a GatewayError for an `error` event, a frame that is
 * not JSON, or a stream that ends without `message_stop`; errors of `events` (network, deadlines,
 * aborts) propagate unchanged. The caller decides whether a throw becomes an `error` part (after
 * the first part) or a plain error (before it).
 */
export function parseAnthropicStream(
  events: AsyncIterable<SseEvent>,
  context: AnthropicParseContext,
): AsyncGenerator<CanonicalStreamPart> {
  return flattenBatches(parseAnthropicBatches(eachAsBatch(events), context));
}

/** parseAnthropicStream over batches of events: a batch of parts per batch of events. */
export function parseAnthropicBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
  context: AnthropicParseContext,
): AsyncGenerator<CanonicalStreamPart[]> {
  const parser = createAnthropicStreamParser(context);
  return parseEventBatches(batches, {
    accept(event, out) {
      const data = event.data.trim();
      const payload = readFrameObject(data);
      if (payload === undefined) return "more";
      const wire = payload as AnthropicStreamEventWire;
      // The `event:` name and `data.type` agree on Anthropic; either one marks an error.
      if (event.event === "error") throw classifyStreamErrorFrame(wire);
      const typed = { ...wire };
      typed.type = typeof wire.type === "string" ? wire.type : event.event;
      for (const part of parser.acceptEvent(typed)) out.push(part);
      return parser.done ? "done" : "more";
    },
    finish() {
      throw new GatewayError("provider_unavailable", "upstream stream ended early");
    },
  });
}

/** The longest streamed input of a provider's own tool call that is kept. */
const MAX_SERVER_INPUT_CHARS = 64 * 1024;
/** Citations kept per text block: a block cites a handful of pages; more is an upstream fault. */
const MAX_BLOCK_CITATIONS = 100;

/** Streamed JSON text of an object, parsed; undefined when it is empty or not an object. */
function parseInputObject(json: string): Record<string, unknown> | undefined {
  if (json.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function stringifyInput(input: unknown): string {
  if (typeof input === "object" && input !== null && Object.keys(input).length > 0)
    return JSON.stringify(input);
  return "{}";
}

function readString(value: unknown): string {
  return typeof value === "string" ? value : "";
}
