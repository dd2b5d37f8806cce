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
 * `usage`, `response-metadata`, `text-start/end`, `reasoning-start`, `tool-input-end` and `finish`
 * parts print nothing (usage and status come with the settlement in finish()); an `error` part prints
 * nothing because the engine reports it through fail().
 */
import type { CanonicalStreamPart, OpaqueReasoningState } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../ingress-format.js";
import { createCarrierState } from "../messages/tool-call-state-carrier.js";
import {
  createResponseEcho,
  createResponseObject,
  type ResponseEcho,
  type ResponseState,
  type ResponsesEncodeContext,
} from "./create-response-object.js";
import { readCompletedAt } from "./encode-result.js";
import { encodeResponsesUsage } from "./encode-usage.js";
import type { ItemSeal } from "./item-seal.js";
import { mapResponseStatus } from "./map-response-status.js";
import { ResponsesEventWriter } from "./responses-event-writer.js";

export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";

type BlockKind = "text" | "reasoning" | "tool";

/** Parts of a block that could not be written yet because another item was open. */
interface PendingBlock {
  kind: BlockKind;
  /** Canonical block id (the tool call id for tools). */
  id: string;
  name: string;
  buffered: string;
  ended: boolean;
  finalArguments?: string;
  providerState?: OpaqueReasoningState;
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
        frames += this.startTool(part.id, part.name);
        break;
      case "tool-input-delta":
        if (part.delta !== "") frames += this.acceptArguments(part.id, part.delta);
        break;
      case "tool-call":
        frames += this.completeTool(part.id, part.name, part.arguments, part.providerState);
        break;
      default:
        return frames;
    }
    return this.isBlocked() ? frames : frames + this.drain(false);
  }

  finish(settlement: Settlement): string {
    if (this.closed) return "";
    let frames = this.started ? "" : this.start();
    frames += this.closeOpenItem() + this.drain(true) + this.closeCalls();
    this.closed = true;
    const { status, incomplete_details } = mapResponseStatus(settlement.finishReason);
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
    return JSON.stringify(createResponseObject(this.context, this.echo, state));
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
      this.buffer("text", id, "").buffered += delta;
      return "";
    }
    return this.openMessage() + this.writer.appendText(delta);
  }

  private acceptReasoning(id: string, delta: string): string {
    const key = `reasoning:${id}`;
    if (this.openBlock === key) return this.writer.appendReasoning(delta);
    if (this.isBlocked() || this.holdReasoning) {
      this.buffer("reasoning", id, "").buffered += delta;
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

  private startTool(id: string, name: string): string {
    const key = `tool:${id}`;
    if (this.openBlock === key || this.pending.has(key)) return "";
    if (this.isBlocked()) {
      this.buffer("tool", id, name);
      return "";
    }
    return this.open(key, () => this.writer.openFunctionCall(id, name));
  }

  private acceptArguments(id: string, delta: string): string {
    const key = `tool:${id}`;
    if (this.openBlock === key) return this.writer.appendArguments(delta);
    // A fragment of a call that never started has no name to open it with; adapters always start.
    const pending = this.pending.get(key);
    if (pending !== undefined) pending.buffered += delta;
    return "";
  }

  private completeTool(
    id: string,
    name: string,
    finalArguments: string,
    providerState: OpaqueReasoningState | undefined,
  ): string {
    const key = `tool:${id}`;
    if (this.openBlock === key) return this.closeTool(id, finalArguments, providerState);
    if (this.pending.has(key) || this.isBlocked()) {
      const block = this.pending.get(key) ?? this.buffer("tool", id, name);
      block.ended = true;
      block.finalArguments = finalArguments;
      block.providerState = providerState;
      return "";
    }
    // Never streamed (e.g. an upstream that sends calls whole): open and close it at once.
    return (
      this.open(key, () => this.writer.openFunctionCall(id, name)) +
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
    return this.writer.closeItem(options);
  }

  private buffer(kind: BlockKind, id: string, name: string): PendingBlock {
    const key = `${kind}:${id}`;
    let block = this.pending.get(key);
    if (block === undefined) {
      block = { kind, id, name, buffered: "", ended: false };
      this.pending.set(key, block);
    }
    return block;
  }

  /**
   * Replays buffered blocks in arrival order until one of them opens a blocking item that has not
   * ended yet. With `force` (the stream is over) every block is written and closed.
   */
  private drain(force: boolean): string {
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
    return force ? frames + this.closeOpenItem() : frames;
  }

  private replay(key: string, block: PendingBlock): string {
    if (block.kind === "text") return this.openMessage() + this.writer.appendText(block.buffered);
    if (block.kind === "reasoning") {
      // Whole when held (its id carries it), else opened to stream on.
      const content = this.holdReasoning
        ? { text: block.buffered, providerState: block.providerState }
        : undefined;
      let frames = this.open(key, () => this.writer.openReasoning(content));
      if (block.buffered !== "") frames += this.writer.appendReasoning(block.buffered);
      return block.ended ? frames + this.closeOpenItem({ providerState: block.providerState }) : frames;
    }
    let frames = this.open(key, () => this.writer.openFunctionCall(block.id, block.name));
    if (block.buffered !== "") frames += this.writer.appendArguments(block.buffered);
    return block.ended
      ? frames + this.closeTool(block.id, block.finalArguments, block.providerState)
      : frames;
  }
}
