/**
 * Canonical stream parts → messages-format SSE:
 *
 *   message_start → per block: content_block_start → content_block_delta* → content_block_stop
 *   → message_delta (stop_reason, cumulative usage) → message_stop
 *
 * Every frame has an `event:` line equal to `data.type`: the official SDK dispatches on it and drops
 * frames without one. Rules the SDK's MessageStream enforces or clients rely on: one
 * `message_start`, first; blocks strictly sequential (never two open at
 * once); `tool_use` starts with `input: {}`; one `signature_delta` right before a thinking block
 * closes; usage in `message_delta` is cumulative; nothing after `message_stop` or `error`.
 *
 * How canonical parts become blocks:
 * - Blocks open lazily, on their first content, so a `text-start` that never gets text leaves no
 *   phantom empty block and a turn that is only a tool call has its tool_use at index 0.
 * - Canonical parts may interleave (parallel tool calls, text arriving while a thinking block still
 *   waits for its signature); the wire may not. Each block keeps its own content, only the oldest
 *   unfinished block streams live, and a later block's content is sent when its turn comes.
 * - A text block needs nothing at its end, so content arriving for a later block closes every text
 *   block before it (a chunk carrying text and a tool call); later text for the same
 *   canonical id opens a new block.
 * - Thinking blocks close at `reasoning-end`, which carries the provider state: it goes out wrapped
 *   as the `signature_delta`; an empty block whose state is redacted data is a `redacted_thinking`
 *   block, sent whole (start + stop, no deltas) as Anthropic does.
 * - Tool blocks close at the final `tool-call` part, which may complete the streamed arguments. A call
 *   never streamed gets one `input_json_delta` with all of its arguments (`""` for none or for
 *   arguments that are not a JSON object, so the SDK reads `{}` as parse-tool-input.ts decides).
 *   A call's own provider state follows the run of tool_use blocks it belongs to in a carrier
 *   thinking block (tool-call-state-carrier.ts), queued when the next other block opens or the
 *   message ends, as in encode-result.ts.
 * - `message_start` carries the prompt's usage, since clients read input tokens there (LangChain's
 *   ChatAnthropic reads them nowhere else): what the upstream reported before any content (Anthropic
 *   in its own message_start, hosts that count usage on every chunk), else metering's estimate of
 *   the prompt. So it waits for the first part that is not metadata or usage. `message_delta`
 *   carries the settled totals, input included (with `server_tool_use`, the run's search and
 *   fetch counts); the SDK overwrites its counters with them.
 *
 * Server tools (encode-server-tool-blocks.ts for the blocks themselves):
 * - A `server-tool-call` is a `server_tool_use` block: start with `input: {}`, one `input_json_delta`
 *   with the whole input, stop. A `server-tool-result` is its result block sent whole in
 *   `content_block_start`, then stop, as Anthropic does; so is a generated image's `image` block.
 *   Both queue like any block and end the text blocks before them; indexes run on across rounds.
 * - A `citation` becomes a `citations_delta` on the text block holding its canonical text id, after
 *   that block's text so far. The SDK appends a citations delta to the block at its index whatever
 *   came before, so the block starts without `citations` and nothing is held back for them. A
 *   citation whose block already closed (a later block had content first) cannot be sent.
 * - `hi.tool_event` frames, for calls that asked for them, follow their block (the bare call id for
 *   a tool with no block) and queue like blocks, so one never lands between a block's start and
 *   stop. Their event name is never `error`, which the SDK would throw on.
 */
import {
  type CanonicalStreamPart,
  type CanonicalUsage,
  createEmptyUsage,
  type FinishReason,
  type OpaqueReasoningState,
  type ServerToolCall,
  type ServerToolResult,
  type UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext, StreamEncoder } from "../ingress-format.js";
import { createToolEndedPayload, createToolStartedPayload } from "../shared/tool-event-payload.js";
import { encodeReasoningBlock, encodeSignature } from "./encode-reasoning-block.js";
import {
  encodeCitation,
  encodeServerToolResultBlock,
  encodeServerToolUseBlock,
  type GeneratedImageBlock,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
  serverToolWireId,
  type WebSearchResultLocation,
} from "./encode-server-tool-blocks.js";
import { encodeMessagesUsage, type MessagesUsage } from "./encode-usage.js";
import { mapStopReason } from "./map-stop-reason.js";
import { readJsonObject } from "./parse-tool-input.js";
import { createCarrierState } from "./tool-call-state-carrier.js";

export const PING_FRAME = 'event: ping\ndata: {"type":"ping"}\n\n';

interface BlockBase {
  /**
   * Content received and not sent yet (text, thinking text, or tool arguments JSON), in the pieces
   * it came in: joined once when it goes out, so no delta re-reads the content before it.
   */
  unsent: string[];
  ended: boolean;
  index?: number;
  /** Its `content_block_stop` went out. */
  closed?: boolean;
}

type Block =
  | (BlockBase & { kind: "text"; citations: WebSearchResultLocation[]; citationsSent: number })
  | (BlockBase & { kind: "thinking"; state?: OpaqueReasoningState; redacted?: boolean })
  /** `sent`: the argument pieces already sent, for the final arguments to be checked against. */
  | (BlockBase & { kind: "tool_use"; id: string; name: string; sent: string[] })
  /** A server-tool block, complete when queued; a `server_tool_use` block's unsent content is its input JSON. */
  | (BlockBase & {
      kind: "server_tool";
      block: ServerToolUseBlock | ServerToolResultBlock | GeneratedImageBlock;
    })
  /** A frame outside any block (`hi.tool_event`): queued in order, takes no index. */
  | (BlockBase & { kind: "frame"; frame: string });

/** What opens with `content_block_start`. */
type WireBlock = Exclude<Block, { kind: "frame" }>;

export function createMessagesStreamEncoder(context: EncodeContext): StreamEncoder {
  return new MessagesStreamEncoder(context);
}

class MessagesStreamEncoder implements StreamEncoder {
  private readonly context: EncodeContext;
  private started = false;
  private closed = false;
  private nextIndex = 0;
  /** The block on the wire, then the ones waiting for it, in order. */
  private active: WireBlock | undefined;
  private readonly waiting: Block[] = [];
  /** Blocks still receiving parts, by `<kind>:<canonical id>`. */
  private readonly receiving = new Map<string, Block>();
  /** Tool calls already closed: a repeated `tool-call` part must not open a second block. */
  private readonly closedToolIds = new Set<string>();
  /** The latest text block of each canonical text id until its `text-end`: where citations go. */
  private readonly citationTargets = new Map<string, Block>();
  /** Carriers of the tool calls closed since the last other block, queued before the next one. */
  private carriers: Block[] = [];
  private finishPart: { reason: FinishReason; stopSequence?: string } | undefined;
  /** Usage the upstream reported before the message started: its count of the prompt. */
  private reportedUsage: CanonicalUsage | undefined;

  constructor(context: EncodeContext) {
    this.context = context;
  }

  push(part: CanonicalStreamPart): string {
    if (this.closed) return "";
    // Metadata and usage print nothing: message_start waits for what follows, with the usage known.
    if (!this.started && (part.type === "response-metadata" || part.type === "usage")) {
      if (part.type === "usage") this.reportedUsage = part.usage;
      return "";
    }
    const opening = this.startMessage();
    switch (part.type) {
      case "text-delta":
        if (part.delta === "") return opening;
        return opening + this.append(`text:${part.id}`, part.delta, () => this.createTextBlock(part.id));
      case "text-end":
        this.citationTargets.delete(part.id);
        return opening + this.end(`text:${part.id}`);
      case "citation":
        return opening + this.addCitation(part.id, part.citation);
      case "server-tool-call":
        return opening + this.queueServerToolCall(part.call);
      case "server-tool-result":
        return opening + this.queueServerToolResult(part.result);
      case "reasoning-delta":
        if (part.delta === "") return opening;
        return (
          opening + this.append(`reasoning:${part.id}`, part.delta, () => createBlock({ kind: "thinking" }))
        );
      case "reasoning-end":
        return opening + this.endReasoning(`reasoning:${part.id}`, part.providerState);
      case "tool-input-start":
        if (this.closedToolIds.has(part.id)) return opening;
        return opening + this.append(`tool:${part.id}`, "", () => createToolBlock(part.id, part.name));
      case "tool-input-delta":
        // A fragment of a call that never started has no name to open it with; its final
        // `tool-call` part carries the whole arguments anyway.
        if (!this.receiving.has(`tool:${part.id}`)) return opening;
        return opening + this.append(`tool:${part.id}`, part.delta);
      case "tool-call":
        return opening + this.completeToolCall(part);
      case "finish":
        this.finishPart = { reason: part.reason, stopSequence: part.stopSequence };
        return opening + this.endAll();
      default:
        // usage: the settlement's totals go out in finish(); error: the engine calls fail();
        // response-metadata, *-start, tool-input-end: nothing to show (blocks open on content).
        return opening;
    }
  }

  finish(settlement: Settlement): string {
    if (this.closed) return "";
    let frames = this.startMessage() + this.endAll();
    this.closed = true;
    const reason = this.finishPart?.reason ?? settlement.finishReason;
    const stopSequence = reason === "stop-sequence" ? (this.finishPart?.stopSequence ?? null) : null;
    frames += encodeFrame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: mapStopReason(reason), stop_sequence: stopSequence },
      usage: encodeMessagesUsage(settlement.usage, settlement.serverToolCalls),
    });
    return `${frames}event: message_stop\ndata: {"type":"message_stop"}\n\n`;
  }

  fail(error: GatewayError, settlement?: Settlement): string {
    if (this.closed) return "";
    this.closed = true;
    // A message_delta would need a stop reason the messages format does not have for a failure, so
    // what the failed stream is billed rides on the error event, beside its request id.
    const envelope = createMessagesErrorEnvelope(error, this.context.requestId);
    // The SDK throws APIError for an `error` event, whatever came before it.
    return encodeFrame(
      "error",
      settlement
        ? Object.assign(envelope, {
            usage: encodeMessagesUsage(settlement.usage, settlement.serverToolCalls),
          })
        : envelope,
    );
  }

  keepAlive(): string {
    // The SDK skips `ping` events anywhere, even before message_start.
    return this.closed ? "" : PING_FRAME;
  }

  private startMessage(): string {
    if (this.started) return "";
    this.started = true;
    return encodeFrame("message_start", {
      type: "message_start",
      message: {
        id: `msg_${this.context.requestId}`,
        type: "message",
        role: "assistant",
        model: this.context.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: this.encodeStartUsage(),
      },
    });
  }

  /**
   * The upstream's count of the prompt when it gave one, else metering's estimate; output 0, since
   * some clients (LangChain) add message_start's output to message_delta's cumulative count.
   */
  private encodeStartUsage(): MessagesUsage {
    const prompt = createEmptyUsage();
    const reported = this.reportedUsage;
    if (reported !== undefined && reported.inputTokens > 0) {
      prompt.inputTokens = reported.inputTokens;
      prompt.cachedInputTokens = reported.cachedInputTokens;
      prompt.cacheWriteTokens = reported.cacheWriteTokens;
      prompt.cacheWrite1hTokens = reported.cacheWrite1hTokens;
    } else {
      prompt.inputTokens = this.context.estimateInputTokens?.() ?? 0;
    }
    return encodeMessagesUsage(prompt);
  }

  /** Adds content to the block of `key` (created when new) and sends what may be sent. */
  private append(key: string, content: string, create?: () => Block): string {
    let block = this.receiving.get(key);
    if (block === undefined) {
      if (create === undefined) return "";
      block = create();
      this.receiving.set(key, block);
      this.queue(block);
    }
    if (content !== "") block.unsent.push(content);
    if (content !== "" || block.kind === "tool_use") this.endTextBlocksBefore(block);
    return this.pump();
  }

  private end(key: string): string {
    const block = this.receiving.get(key);
    if (block === undefined) return "";
    block.ended = true;
    this.receiving.delete(key);
    return this.pump();
  }

  private endReasoning(key: string, state: OpaqueReasoningState | undefined): string {
    let block = this.receiving.get(key);
    // A block with neither text nor state has nothing to show or carry.
    if (block === undefined && state === undefined) return "";
    if (block === undefined) {
      block = createBlock({ kind: "thinking" });
      this.receiving.set(key, block);
      this.queue(block);
      this.endTextBlocksBefore(block);
    }
    if (block.kind === "thinking") block.state = state;
    return this.end(key);
  }

  private createTextBlock(id: string): Block {
    const block: Block = {
      kind: "text",
      unsent: [],
      ended: false,
      citations: [],
      citationsSent: 0,
    };
    this.citationTargets.set(id, block);
    return block;
  }

  private addCitation(textId: string, citation: UrlCitation): string {
    const block = this.citationTargets.get(textId);
    if (block?.kind !== "text" || block.closed) return "";
    block.citations.push(encodeCitation(citation));
    return this.pump();
  }

  private queueServerToolCall(call: ServerToolCall): string {
    const block = encodeServerToolUseBlock(call);
    if (block !== undefined) {
      this.queueComplete({
        kind: "server_tool",
        block,
        unsent: [JSON.stringify(call.input)],
        ended: true,
      });
    }
    if (call.events) {
      this.queueToolEvent(createToolStartedPayload(call, serverToolWireId(call.tool, call.id)));
    }
    return this.pump();
  }

  private queueServerToolResult(result: ServerToolResult): string {
    const block = encodeServerToolResultBlock(result);
    if (block !== undefined) this.queueComplete({ kind: "server_tool", block, unsent: [], ended: true });
    if (result.events) {
      this.queueToolEvent(createToolEndedPayload(result, serverToolWireId(result.tool, result.callId)));
    }
    return this.pump();
  }

  private queueToolEvent(payload: object): void {
    const frame = encodeFrame("hi.tool_event", { type: "hi.tool_event", ...payload });
    this.queueComplete({ kind: "frame", frame, unsent: [], ended: true });
  }

  /** Queues a block that needs no more parts; the text blocks before it are over. */
  private queueComplete(block: Block): void {
    this.queue(block);
    this.endTextBlocksBefore(block);
  }

  private completeToolCall(part: Extract<CanonicalStreamPart, { type: "tool-call" }>): string {
    if (this.closedToolIds.has(part.id)) return "";
    const key = `tool:${part.id}`;
    let frames = this.receiving.has(key)
      ? ""
      : this.append(key, "", () => createToolBlock(part.id, part.name));
    const block = this.receiving.get(key);
    // Final arguments that extend what was sent complete it (e.g. `{}` for a no-argument call that
    // streamed nothing); ones that contradict what the client already has cannot be unsent.
    if (block?.kind === "tool_use") {
      const sent = block.sent.join("");
      if (part.arguments.startsWith(sent)) {
        const rest = part.arguments.slice(sent.length);
        block.unsent = rest === "" ? [] : [rest];
      }
    }
    this.closedToolIds.add(part.id);
    if (block !== undefined && part.providerState !== undefined) {
      const state = createCarrierState(part.providerState, part.id);
      this.carriers.push({ kind: "thinking", unsent: [], ended: true, state });
    }
    frames += this.end(key);
    return frames;
  }

  /** Queues a new block; one that is not a tool_use ends the run of calls, so their carriers go first. */
  private queue(block: Block): void {
    if (block.kind !== "tool_use") this.queueCarriers();
    this.waiting.push(block);
  }

  private queueCarriers(): void {
    this.waiting.push(...this.carriers);
    this.carriers = [];
  }

  private endAll(): string {
    for (const block of this.receiving.values()) block.ended = true;
    this.receiving.clear();
    this.queueCarriers();
    return this.pump();
  }

  /** Text blocks cannot continue once a later block has content: close the ones before `block`. */
  private endTextBlocksBefore(block: Block): void {
    // Hot path: content for the block on the wire, nothing before it.
    if (block === this.active) return;
    if (this.active !== undefined) this.endTextBlock(this.active);
    for (const earlier of this.waiting) {
      if (earlier === block) break;
      this.endTextBlock(earlier);
    }
  }

  private endTextBlock(block: Block): void {
    if (block.kind !== "text" || block.ended) return;
    block.ended = true;
    for (const [key, value] of this.receiving) if (value === block) this.receiving.delete(key);
  }

  /** Sends the active block's new content, closing it and moving on while blocks are complete. */
  private pump(): string {
    let frames = "";
    for (;;) {
      if (this.active === undefined) {
        const next = this.waiting.shift();
        if (next === undefined) return frames;
        if (next.kind === "frame") {
          frames += next.frame;
          continue;
        }
        this.active = next;
        frames += this.openBlock(next);
      }
      const block = this.active;
      frames += this.sendContent(block);
      if (!block.ended) return frames;
      frames += this.closeBlock(block);
      block.closed = true;
      this.active = undefined;
    }
  }

  private openBlock(block: WireBlock): string {
    const index = this.nextIndex++;
    block.index = index;
    let contentBlock: unknown;
    if (block.kind === "text") contentBlock = { type: "text", text: "" };
    else if (block.kind === "server_tool")
      contentBlock =
        block.block.type === "server_tool_use"
          ? { type: "server_tool_use", id: block.block.id, name: block.block.name, input: {} }
          : block.block;
    else if (block.kind === "tool_use")
      contentBlock = { type: "tool_use", id: block.id, name: block.name, input: {} };
    else {
      // Only a finished block can be redacted: its state arrives with reasoning-end.
      const whole = block.ended ? encodeReasoningBlock(takeUnsent(block), block.state) : undefined;
      if (whole?.type === "thinking") block.unsent = [whole.thinking];
      block.redacted = whole?.type === "redacted_thinking";
      contentBlock = block.redacted ? whole : { type: "thinking", thinking: "", signature: "" };
    }
    return encodeFrame("content_block_start", {
      type: "content_block_start",
      index,
      content_block: contentBlock,
    });
  }

  private sendContent(block: WireBlock): string {
    if (block.kind === "thinking" && block.redacted) return "";
    if (block.kind === "server_tool") {
      if (block.block.type !== "server_tool_use" || block.unsent.length === 0) return "";
      return this.encodeDelta(block.index!, { type: "input_json_delta", partial_json: takeUnsent(block) });
    }
    if (block.kind === "text") return this.sendText(block);
    if (block.kind === "tool_use" && block.sent.length === 0 && block.ended) {
      // Sent whole: exactly one delta, even an empty one, as Anthropic does for a no-argument call.
      const content = takeUnsent(block);
      const json = readJsonObject(content) === undefined ? "" : content;
      block.sent.push(content);
      return this.encodeDelta(block.index!, { type: "input_json_delta", partial_json: json });
    }
    if (block.unsent.length === 0) return "";
    const fragment = takeUnsent(block);
    if (block.kind === "thinking")
      return this.encodeDelta(block.index!, { type: "thinking_delta", thinking: fragment });
    if (block.kind === "tool_use") block.sent.push(fragment);
    return this.encodeDelta(block.index!, { type: "input_json_delta", partial_json: fragment });
  }

  /** New text, then the citations that arrived after it. */
  private sendText(block: Extract<Block, { kind: "text" }>): string {
    let frames = "";
    if (block.unsent.length > 0) {
      frames += this.encodeDelta(block.index!, { type: "text_delta", text: takeUnsent(block) });
    }
    for (; block.citationsSent < block.citations.length; block.citationsSent++) {
      const citation = block.citations[block.citationsSent];
      frames += this.encodeDelta(block.index!, { type: "citations_delta", citation });
    }
    return frames;
  }

  private closeBlock(block: WireBlock): string {
    let frames = "";
    if (block.kind === "thinking" && !block.redacted && block.state !== undefined) {
      frames = this.encodeDelta(block.index!, {
        type: "signature_delta",
        signature: encodeSignature(block.state),
      });
    }
    return `${frames}event: content_block_stop\ndata: {"type":"content_block_stop","index":${block.index}}\n\n`;
  }

  private encodeDelta(index: number, delta: Record<string, unknown>): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":${JSON.stringify(delta)}}\n\n`;
  }
}

function createBlock(fields: { kind: "thinking" }): Block {
  return { kind: fields.kind, unsent: [], ended: false };
}

function createToolBlock(id: string, name: string): Block {
  return { kind: "tool_use", id, name, sent: [], unsent: [], ended: false };
}

/** The block's unsent content as one string, taken out of the block. */
function takeUnsent(block: BlockBase): string {
  const content = block.unsent.length === 1 ? block.unsent[0] : block.unsent.join("");
  block.unsent = [];
  return content;
}

function encodeFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
