/**
 * Canonical stream parts → responses SSE:
 *
 *   response.created → response.in_progress → items, one at a time → response.completed
 *   (or response.incomplete) carrying the full response with usage
 *
 * `responses-event-writer.ts` writes the events of one item; this file decides which canonical part
 * goes to which item and when. Items follow the layout of encode-output-items.ts (the non-streaming
 * rule), so `response.completed.output` equals the non-streamed `output` for the same parts.
 *
 * A call marked `custom` is a custom_tool_call item, one with a `namespace` keeps it: the writer
 * renders both (responses-event-writer.ts); here they are function_call items like any other.
 *
 * Items must be strictly sequential (the official SDK's accumulator and agent loops depend on it),
 * but canonical blocks may overlap: parallel tool calls interleave their argument deltas, and a
 * reasoning block can end after a tool call started. So a reasoning or function_call item, once
 * open, blocks: parts of other blocks are buffered in arrival order and replayed when it closes
 * (reasoning at `reasoning-end`, a call at `tool-call`). The provider state of calls goes out in
 * carrier reasoning items after the run of function_call items, when another item opens or the
 * response ends, as in encode-output-items.ts. A message item never blocks: it closes as
 * soon as another item must open, and text that follows text joins it. Nothing is dropped: finish()
 * closes whatever is still open or buffered.
 *
 * With an item seal (the caller did not set `store: false`, so it may send `item_reference`s,
 * item-seal.ts), a reasoning block is held until it ends and then sent whole, opened with its
 * content so that its id can carry it; parts arriving meanwhile wait behind it, as behind an open
 * item. Message ids cannot carry their text (they go out before it), function calls are never
 * referenced, and carriers are sent whole anyway.
 *
 * Server tools (the engine's tool loop): a `server-tool-call` of web_search or web_fetch (or image)
 * closes the open message and adds a web_search_call (or image_generation_call) item in progress,
 * which its `server-tool-result` finishes (responses-event-writer.ts); a round's calls are all
 * added before their results come, so several such items may be in progress at once. Other server
 * tools have no item. With the
 * call's `events`, each call and result also writes a `hi.tool_event` frame (payload from
 * tool-event-payload.ts, naming the item's id, or the call id when there is no item), after the
 * native events of the same moment. While another item blocks, these parts wait in the buffer
 * like any block, so frames keep the order of the parts. A call still without result when the
 * stream finishes is closed as failed, as encode-output-items.ts shows it.
 *
 * A `citation` part becomes an `output_text.annotation.added` on the message its text block went
 * into, its offsets shifted by the text the message held before the block; it waits with its
 * block's text when that is buffered. A citation of text no longer in the open message (a message
 * closed by an interleaved item between the text and its citation) cannot be annotated any more
 * and is dropped.
 *
 * `usage`, `response-metadata`, `text-start/end`, `reasoning-start`, `tool-input-end` and `finish`
 * parts print nothing (usage and status come with the settlement in finish()); an `error` part prints
 * nothing because the engine reports it through fail().
 */
import {
  type CanonicalStreamPart,
  type OpaqueReasoningState,
  pickCallShape,
  type ResponsesCallShape,
  type ServerToolCall,
  type UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../ingress-format.js";
import { createCarrierState } from "../messages/tool-call-state-carrier.js";
import { createToolEndedPayload, createToolStartedPayload } from "../shared/tool-event-payload.js";
import {
  createResponseEcho,
  createResponseObject,
  type ResponseEcho,
  type ResponseState,
  type ResponsesEncodeContext,
} from "./create-response-object.js";
import { encodeUrlCitation, serverToolItemType } from "./encode-output-items.js";
import { readCompletedAt } from "./encode-result.js";
import { encodeResponsesUsage } from "./encode-usage.js";
import type { ItemSeal } from "./item-seal.js";
import { mapResponseStatus } from "./map-response-status.js";
import { ResponsesEventWriter } from "./responses-event-writer.js";

export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";

type BlockKind = "text" | "reasoning" | "tool" | "server";

type ServerToolPart = Extract<CanonicalStreamPart, { type: "server-tool-call" | "server-tool-result" }>;

/** Parts of a block that could not be written yet because another item was open. */
interface PendingBlock {
  kind: BlockKind;
  /** Canonical block id (the tool call id for tools). */
  id: string;
  name: string;
  /** Its text or arguments while it waits, in pieces (joined once, when written). */
  buffered: string[];
  ended: boolean;
  finalArguments?: string;
  providerState?: OpaqueReasoningState;
  /** Text: citations that arrived after the buffered text, in order. */
  citations?: UrlCitation[];
  /** Server: the part itself (written whole). */
  serverPart?: ServerToolPart;
  /** Tools: `custom` (a custom_tool_call item) and `namespace`. */
  shape?: ResponsesCallShape;
}

export function createResponsesStreamEncoder(
  context: ResponsesEncodeContext,
  itemSeal?: ItemSeal,
): StreamEncoder {
  return new ResponsesStreamEncoder(
    context,
    context.request?.noItemReferences === true ? undefined : itemSeal,
  );
}

class ResponsesStreamEncoder implements StreamEncoder {
  private readonly writer: ResponsesEventWriter;
  private readonly echo: ResponseEcho;
  private started = false;
  private closed = false;
  /** `<kind>:<id>` of the block the open item belongs to (text blocks share the message item). */
  private openBlock: string | undefined;
  private readonly pending = new Map<string, PendingBlock>();
  /** Carrier states of the calls closed since the last other item (encode-output-items.ts). */
  private callStates: OpaqueReasoningState[] = [];

  /** Reasoning blocks are held until they end, so their ids can carry them. */
  private readonly holdReasoning: boolean;
  /**
   * Text blocks in the open message: where each one's first character is in the message's text
   * (negative when the block began in an earlier message). Cleared when the message closes.
   */
  private readonly textOffsets = new Map<string, number>();
  /** UTF-16 units of each text block written so far, across messages. */
  private readonly textWritten = new Map<string, number>();
  /** Server-tool calls by id, for their results (the call's own input and events). */
  private readonly serverCalls = new Map<string, ServerToolCall>();

  constructor(
    private readonly context: ResponsesEncodeContext,
    itemSeal: ItemSeal | undefined,
  ) {
    this.writer = new ResponsesEventWriter(context.requestId, itemSeal);
    this.echo = createResponseEcho(context.request);
    this.holdReasoning = itemSeal !== undefined;
  }

  push(part: CanonicalStreamPart): string {
    if (this.closed) return "";
    let frames = this.started ? "" : this.start();
    switch (part.type) {
      case "text-delta":
        if (part.delta !== "") frames += this.acceptText(part.id, part.delta);
        break;
      case "reasoning-delta":
        if (part.delta !== "") frames += this.acceptReasoning(part.id, part.delta);
        break;
      case "reasoning-end":
        frames += this.endReasoning(part.id, part.providerState);
        break;
      case "tool-input-start":
        frames += this.startTool(part.id, part.name, pickCallShape(part));
        break;
      case "tool-input-delta":
        if (part.delta !== "") frames += this.acceptArguments(part.id, part.delta);
        break;
      case "tool-call":
        frames += this.completeTool(
          part.id,
          part.name,
          part.arguments,
          part.providerState,
          pickCallShape(part),
        );
        break;
      case "server-tool-call":
        frames += this.acceptServerPart(`call:${part.call.id}`, part);
        break;
      case "server-tool-result":
        frames += this.acceptServerPart(`result:${part.result.callId}`, part);
        break;
      case "citation":
        frames += this.acceptCitation(part.id, part.citation);
        break;
      default:
        return frames;
    }
    return this.isBlocked() ? frames : frames + this.drain(false);
  }

  finish(settlement: Settlement): string {
    if (this.closed) return "";
    let frames = this.started ? "" : this.start();
    const { status, incomplete_details } = mapResponseStatus(settlement.finishReason);
    frames +=
      this.closeOpenItem({ incomplete: status === "incomplete" }) +
      this.drain(true, status === "incomplete") +
      this.closeCalls() +
      this.writer.closeUnansweredServerToolItems();
    this.closed = true;
    const response = this.createResponse({
      status,
      incompleteDetails: incomplete_details,
      completedAt: status === "completed" ? readCompletedAt(this.context.createdAt) : null,
      output: this.writer.output,
      usage: encodeResponsesUsage(settlement.usage, settlement.costMicroUsd),
    });
    const type = status === "completed" ? "response.completed" : "response.incomplete";
    return frames + this.writer.writeResponseEvent(type, response);
  }

  fail(error: GatewayError, settlement?: Settlement): string {
    if (this.closed) return "";
    const frames = this.started ? "" : this.start();
    this.closed = true;
    const envelope = createCommonErrorEnvelope(error, this.context.requestId).error;
    // OpenAI's schema puts code/message/param at the top level; the live API (and the official SDK,
    // which throws APIError only for a truthy `error` member) uses the nested object: send both.
    const errorEvent = this.writer.writeEvent(
      "error",
      `"code":${JSON.stringify(error.code)},"message":${JSON.stringify(error.message)},` +
        `"param":${JSON.stringify(error.param)},"error":${JSON.stringify(envelope)}`,
    );
    const response = this.createResponse({
      status: "failed",
      error: { code: error.code, message: error.message },
      output: this.writer.output,
      // What the failed response is billed (null only when the caller has no settlement).
      usage: settlement ? encodeResponsesUsage(settlement.usage, settlement.costMicroUsd) : null,
    });
    return frames + errorEvent + this.writer.writeResponseEvent("response.failed", response);
  }

  keepAlive(): string {
    return this.closed ? "" : KEEP_ALIVE_FRAME;
  }

  private start(): string {
    this.started = true;
    const response = this.createResponse({ status: "in_progress", output: [], usage: null });
    return (
      this.writer.writeResponseEvent("response.created", response) +
      this.writer.writeResponseEvent("response.in_progress", response)
    );
  }

  private createResponse(state: ResponseState): string {
    return this.writer.quotedTexts.stringifyReusing(createResponseObject(this.context, this.echo, state));
  }

  /**
   * A reasoning or function_call item is open and only its own end may close it, or the first
   * waiting block is a reasoning block held until it ends.
   */
  private isBlocked(): boolean {
    const type = this.writer.openItemType;
    return (type !== undefined && type !== "message") || this.isHolding();
  }

  private isHolding(): boolean {
    if (!this.holdReasoning) return false;
    const first: PendingBlock | undefined = this.pending.values().next().value;
    return first?.kind === "reasoning" && !first.ended;
  }

  private acceptText(id: string, delta: string): string {
    if (this.isBlocked()) {
      this.buffer("text", id, "").buffered.push(delta);
      return "";
    }
    return this.writeText(id, delta);
  }

  /** Text of block `id` into the message (opened when needed), noting where the block sits in it. */
  private writeText(id: string, delta: string): string {
    const frames = this.openMessage();
    const written = this.textWritten.get(id) ?? 0;
    if (!this.textOffsets.has(id)) this.textOffsets.set(id, this.writer.openTextLength - written);
    this.textWritten.set(id, written + delta.length);
    return frames + this.writer.appendText(delta);
  }

  private acceptCitation(id: string, citation: UrlCitation): string {
    const pending = this.pending.get(`text:${id}`);
    if (pending !== undefined) {
      if (pending.citations === undefined) pending.citations = [];
      pending.citations.push(citation);
      return "";
    }
    return this.isBlocked() ? "" : this.writeCitation(id, citation);
  }

  private writeCitation(id: string, citation: UrlCitation): string {
    const offset = this.textOffsets.get(id);
    if (offset === undefined || offset + citation.startIndex < 0) return "";
    return this.writer.addAnnotation(encodeUrlCitation(citation, offset));
  }

  private acceptServerPart(key: string, part: ServerToolPart): string {
    if (this.isBlocked()) {
      this.buffer("server", key, "").serverPart = part;
      return "";
    }
    return this.writeServerPart(part);
  }

  /**
   * A call adds its item (after closing the open message and writing the carriers of the calls
   * before it, as any other item does); its result finishes it. Only a message can be open here
   * (the stream is not blocked).
   */
  private writeServerPart(part: ServerToolPart): string {
    if (part.type === "server-tool-call") {
      const { call } = part;
      this.serverCalls.set(call.id, call);
      if (serverToolItemType(call.tool) === undefined) {
        return call.events ? this.writer.writeToolEvent(createToolStartedPayload(call, call.id)) : "";
      }
      let frames = this.closeOpenItem() + this.closeCalls() + this.writer.openServerToolItem(call);
      if (call.events) {
        frames += this.writer.writeToolEvent(
          createToolStartedPayload(call, this.writer.serverToolItemId(call)),
        );
      }
      return frames;
    }
    const { result } = part;
    if (serverToolItemType(result.tool) === undefined) {
      return result.events ? this.writer.writeToolEvent(createToolEndedPayload(result, result.callId)) : "";
    }
    const call = this.serverCalls.get(result.callId) ?? {
      id: result.callId,
      tool: result.tool,
      input: result.input,
      events: result.events,
    };
    // A result whose call was never seen adds its item here, so it needs the slot a call would.
    let frames = this.writer.hasServerToolItem(call.id) ? "" : this.closeOpenItem() + this.closeCalls();
    const wireId = this.writer.serverToolItemId(call);
    frames += this.writer.closeServerToolItem(call, result);
    if (result.events) frames += this.writer.writeToolEvent(createToolEndedPayload(result, wireId));
    return frames;
  }

  private acceptReasoning(id: string, delta: string): string {
    const key = `reasoning:${id}`;
    if (this.openBlock === key) return this.writer.appendReasoning(delta);
    if (this.isBlocked() || this.holdReasoning) {
      this.buffer("reasoning", id, "").buffered.push(delta);
      return "";
    }
    return this.open(key, () => this.writer.openReasoning()) + this.writer.appendReasoning(delta);
  }

  private endReasoning(id: string, providerState: OpaqueReasoningState | undefined): string {
    const key = `reasoning:${id}`;
    if (this.openBlock === key) return this.closeOpenItem({ providerState });
    const pending = this.pending.get(key);
    // A block with neither text nor state is nothing at all.
    if (pending === undefined && providerState === undefined) return "";
    if (pending !== undefined || this.isBlocked()) {
      // Written by drain() when its turn comes: now, when nothing else is open or held before it.
      const block = pending ?? this.buffer("reasoning", id, "");
      block.ended = true;
      block.providerState = providerState;
      return "";
    }
    return (
      this.open(key, () => this.writer.openReasoning({ text: "", providerState })) +
      this.closeOpenItem({ providerState })
    );
  }

  private startTool(id: string, name: string, shape: ResponsesCallShape): string {
    const key = `tool:${id}`;
    if (this.openBlock === key || this.pending.has(key)) return "";
    if (this.isBlocked()) {
      this.buffer("tool", id, name).shape = shape;
      return "";
    }
    return this.open(key, () => this.writer.openFunctionCall(id, name, shape));
  }

  private acceptArguments(id: string, delta: string): string {
    const key = `tool:${id}`;
    if (this.openBlock === key) return this.writer.appendArguments(delta);
    // A fragment of a call that never started has no name to open it with; adapters always start.
    const pending = this.pending.get(key);
    if (pending !== undefined) pending.buffered.push(delta);
    return "";
  }

  private completeTool(
    id: string,
    name: string,
    finalArguments: string,
    providerState: OpaqueReasoningState | undefined,
    shape: ResponsesCallShape,
  ): string {
    const key = `tool:${id}`;
    if (this.openBlock === key) return this.closeTool(id, finalArguments, providerState);
    if (this.pending.has(key) || this.isBlocked()) {
      const block = this.pending.get(key) ?? this.buffer("tool", id, name);
      block.shape ??= shape;
      block.ended = true;
      block.finalArguments = finalArguments;
      block.providerState = providerState;
      return "";
    }
    // Never streamed (e.g. an upstream that sends calls whole): open and close it at once.
    return (
      this.open(key, () => this.writer.openFunctionCall(id, name, shape)) +
      this.closeTool(id, finalArguments, providerState)
    );
  }

  /**
   * Closes the open function_call item; the call's own state waits for the end of the run of calls,
   * then goes out in a carrier reasoning item (empty summary), as in encode-output-items.ts.
   */
  private closeTool(
    id: string,
    finalArguments: string | undefined,
    providerState: OpaqueReasoningState | undefined,
  ): string {
    if (providerState !== undefined) this.callStates.push(createCarrierState(providerState, id));
    return this.closeOpenItem({ finalArguments });
  }

  /** The carriers of the run of function_call items that just ended. */
  private closeCalls(): string {
    let frames = "";
    for (const providerState of this.callStates) {
      frames +=
        this.writer.openReasoning({ text: "", providerState }) + this.writer.closeItem({ providerState });
    }
    this.callStates = [];
    return frames;
  }

  private openMessage(): string {
    if (this.writer.openItemType === "message") return "";
    return this.open("text", () => this.writer.openMessage());
  }

  /** Closes the open message (the only item that may be open here) and opens another. */
  private open(key: string, openItem: () => string): string {
    let frames = this.closeOpenItem();
    if (!key.startsWith("tool:")) frames += this.closeCalls();
    this.openBlock = key;
    return frames + openItem();
  }

  private closeOpenItem(options?: Parameters<ResponsesEventWriter["closeItem"]>[0]): string {
    this.openBlock = undefined;
    if (this.writer.openItemType === "message") this.textOffsets.clear();
    return this.writer.closeItem(options);
  }

  private buffer(kind: BlockKind, id: string, name: string): PendingBlock {
    const key = `${kind}:${id}`;
    let block = this.pending.get(key);
    if (block === undefined) {
      block = { kind, id, name, buffered: [], ended: false };
      this.pending.set(key, block);
    }
    return block;
  }

  /**
   * Replays buffered blocks in arrival order until one of them opens a blocking item that has not
   * ended yet. With `force` (the stream is over) every block is written and closed; `incomplete`:
   * the response was cut, so the message closed last says so.
   */
  private drain(force: boolean, incomplete = false): string {
    let frames = "";
    for (const [key, block] of this.pending) {
      if (this.isBlocked()) {
        if (!force) break;
        frames += this.closeOpenItem();
      }
      // (a held reasoning block at the head blocks; when forced, it is written as far as it got)
      this.pending.delete(key);
      frames += this.replay(key, block);
    }
    return force ? frames + this.closeOpenItem({ incomplete }) : frames;
  }

  private replay(key: string, block: PendingBlock): string {
    if (block.kind === "server") return this.writeServerPart(block.serverPart!);
    const buffered = block.buffered.join("");
    if (block.kind === "text") {
      let frames = buffered === "" ? "" : this.writeText(block.id, buffered);
      for (const citation of block.citations ?? []) frames += this.writeCitation(block.id, citation);
      return frames;
    }
    if (block.kind === "reasoning") {
      // Whole when held (its id carries it), else opened to stream on.
      const content = this.holdReasoning ? { text: buffered, providerState: block.providerState } : undefined;
      let frames = this.open(key, () => this.writer.openReasoning(content));
      if (buffered !== "") frames += this.writer.appendReasoning(buffered);
      return block.ended ? frames + this.closeOpenItem({ providerState: block.providerState }) : frames;
    }
    let frames = this.open(key, () => this.writer.openFunctionCall(block.id, block.name, block.shape));
    if (buffered !== "") frames += this.writer.appendArguments(buffered);
    return block.ended
      ? frames + this.closeTool(block.id, block.finalArguments, block.providerState)
      : frames;
  }
}
