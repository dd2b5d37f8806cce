/**
 * Responses SSE events → canonical stream parts.
 *
 * - `response.created` / `in_progress` / `queued` give the id and model of `response-metadata`,
 *   which goes out just before the first content part: until content exists a failure can still
 *   be thrown as a plain error (and retried).
 * - `output_item.added`: function_call → `tool-input-start` (index = order among the turn's
 *   calls, the item's `namespace` kept). A `custom_tool_call` is a call too, marked `custom`: its
 *   `custom_tool_call_input.delta`s become deltas of `{"input": <text>}` arguments (each piece
 *   escaped on its own, canonical/result.ts), so every format can show it as a function call. Messages and reasoning items open their block with their first text (a reasoning item
 *   without text opens when it completes with encrypted content), so an empty item yields no empty
 *   block, and a failure right after an item was announced can still be thrown as a plain error.
 * - `output_text.delta` / `refusal.delta` → `text-delta`; `reasoning_summary_text.delta` and
 *   `reasoning_text.delta` → `reasoning-delta` (summary parts separated by a blank line, as in the
 *   JSON parse); `function_call_arguments.delta` → `tool-input-delta`.
 * - `output_item.done` closes the item from the complete item: `text-end`; `tool-input-end` and
 *   `tool-call` with the item's arguments; `reasoning-end` carrying the encrypted content of the
 *   done item (it differs from the one in `added`). Text the deltas did not deliver is emitted first.
 * - `response.completed` / `response.incomplete` close whatever is still open from the final
 *   `output`, then give `usage` and `finish`. Items are put out in output order whatever order they
 *   complete in (see `sequence-output-items.ts`).
 * - When the request sent `web_search` as OpenAI's own tool: a `web_search_call` item becomes a
 *   server-tool call and its result when it is done (read-web-search-items.ts), and each
 *   `output_text.annotation.added` `url_citation` a `citation` part of the message's text, at once
 *   (the delta completing its span came first); a done message whose annotations were not streamed
 *   gets them from the done item, before its `text-end`.
 * - `error` and `response.failed` throw the classified error; so does a stream that ends without a
 *   terminal event. Other event types (content parts, other hosted tools, keep-alives) carry nothing
 *   the canonical stream needs and are skipped.
 */
import {
  type CanonicalStreamPart,
  type CanonicalUsage,
  CUSTOM_INPUT_PREFIX,
  CUSTOM_INPUT_SUFFIX,
  encodeCustomCallArguments,
  escapeCustomInputPiece,
  pickCallShape,
  type ResponsesCallShape,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { normalizeArguments } from "../openai-compatible/read-message-fields.js";
import {
  appendToContentBlock,
  type ContentBlock,
  createContentBlock,
  endContentBlock,
} from "../shared/block-tracker.js";
import { eachAsBatch, flattenBatches, parseEventBatches, readFrameObject } from "../shared/part-batches.js";
import type { SseEvent } from "../shared/sse-reader.js";
import { classifyErrorEvent, classifyResponseError } from "./classify-response-error.js";
import { mapResponsesFinishReason, readRawFinishReason } from "./map-finish-reason.js";
import { mapResponsesUsage } from "./map-usage.js";
import type { ResponsesParseContext } from "./parse-response.js";
import {
  readCallId,
  readCallShape,
  readMessageText,
  readReasoningState,
  readReasoningText,
  SUMMARY_PART_SEPARATOR,
} from "./read-output-items.js";
import { readMessageCitations, readUrlCitation, readWebSearchCall } from "./read-web-search-items.js";
import { createOutputSequencer } from "./sequence-output-items.js";
import type { ResponsesOutputItemWire, ResponsesStreamEventWire, ResponseWire } from "./wire-types.js";

type ItemKind = "message" | "function_call" | "reasoning" | "web_search_call" | "other";

interface ItemState {
  outputIndex: number;
  kind: ItemKind;
  /** The upstream item id (`msg_…`, `fc_…`, `rs_…`) when known. */
  itemId?: string;
  /** Block id of text/reasoning parts; the call id for function calls. */
  id: string;
  /** The text or reasoning block of a message or reasoning item. */
  block?: ContentBlock;
  /** Function calls: whether `tool-input-start` has gone out. */
  started: boolean;
  done: boolean;
  /** Text, reasoning text or arguments emitted so far, in pieces (joined once, at the item's end). */
  emitted: string[];
  /** UTF-16 units in `emitted`. */
  emittedLength: number;
  /** Which summary or content part the last reasoning delta belonged to. */
  reasoningPart?: string;
  name: string;
  toolIndex: number;
  /** From `function_call_arguments.done` (or `custom_tool_call_input.done`), for servers whose done item lacks them. */
  finalArguments?: string;
  /** Calls: `custom` (then `emitted` holds the raw input) and `namespace`. */
  shape: ResponsesCallShape;
  /** Custom calls: whether the `{"input":"` prefix has gone out as a delta. */
  prefixSent: boolean;
  /** Messages: where each content part (`content_index`) starts in the emitted text. */
  partStarts?: Map<number, number>;
  /** Messages: citations emitted from annotation events. */
  citations: number;
}

export interface ResponsesStreamParser {
  /** Folds one event in; returns the parts it completes. Throws on `error` / `response.failed`. */
  acceptEvent(event: ResponsesStreamEventWire, eventName?: string): CanonicalStreamPart[];
  /** Whether a terminal event (`response.completed` / `response.incomplete`) has been read. */
  readonly finished: boolean;
  /**
   * A `response.failed` after content that reported usage: `acceptEvent` returned that usage as a
   * part (what the failed response is billed from) and the caller throws this next.
   */
  readonly failure: GatewayError | undefined;
}

export function createResponsesStreamParser(context: ResponsesParseContext): ResponsesStreamParser {
  const items = new Map<number, ItemState>();
  const indexByItemId = new Map<string, number>();
  const sequencer = createOutputSequencer();
  let upstreamId: string | undefined;
  let upstreamModel: string | undefined;
  let metadataSent = false;
  let toolCount = 0;
  let hasRefusal = false;
  let finished = false;
  let failure: GatewayError | undefined;

  function readResponseMetadata(response: ResponseWire | null | undefined): void {
    if (typeof response?.id === "string" && response.id !== "") upstreamId ??= response.id;
    if (typeof response?.model === "string" && response.model !== "") upstreamModel ??= response.model;
  }

  function locate(event: ResponsesStreamEventWire): number {
    if (typeof event.output_index === "number") return event.output_index;
    const known = typeof event.item_id === "string" ? indexByItemId.get(event.item_id) : undefined;
    return known ?? Math.max(-1, ...items.keys());
  }

  /**
   * The output index of an `output_item.added` / `.done` event: the index its item's id was first
   * seen at, when known (a repeated or mis-indexed event must not open the same item twice), else
   * the event's own.
   */
  function locateItem(event: ResponsesStreamEventWire): number {
    return knownIndexOf(event.item) ?? locate(event);
  }

  /** The output index the stream announced an item at, by its id. */
  function knownIndexOf(item: ResponsesOutputItemWire | null | undefined): number | undefined {
    return typeof item?.id === "string" ? indexByItemId.get(item.id) : undefined;
  }

  function ensureItem(outputIndex: number, kind: ItemKind, item?: ResponsesOutputItemWire | null): ItemState {
    const existing = items.get(outputIndex);
    if (existing !== undefined) return existing;
    const itemId = typeof item?.id === "string" && item.id !== "" ? item.id : undefined;
    if (itemId !== undefined) indexByItemId.set(itemId, outputIndex);
    const id = kind === "function_call" && item ? readCallId(item) : (itemId ?? `${kind}-${outputIndex}`);
    const blockKind = kind === "message" ? "text" : kind === "reasoning" ? "reasoning" : undefined;
    const state: ItemState = {
      outputIndex,
      kind,
      ...(itemId === undefined ? {} : { itemId }),
      id,
      ...(blockKind === undefined ? {} : { block: createContentBlock(blockKind, id) }),
      started: false,
      done: false,
      emitted: [],
      emittedLength: 0,
      name: typeof item?.name === "string" ? item.name : "",
      toolIndex: kind === "function_call" ? toolCount++ : -1,
      citations: 0,
      shape: readCallShape(item),
      prefixSent: false,
    };
    items.set(outputIndex, state);
    return state;
  }

  function startCall(state: ItemState, parts: CanonicalStreamPart[]): void {
    if (state.started) return;
    state.started = true;
    parts.push({
      type: "tool-input-start",
      id: state.id,
      index: state.toolIndex,
      name: state.name,
      ...state.shape,
    });
  }

  function appendDelta(state: ItemState, delta: string, parts: CanonicalStreamPart[]): void {
    if (delta === "") return;
    state.emitted.push(delta);
    state.emittedLength += delta.length;
    if (state.block !== undefined) {
      appendToContentBlock(state.block, delta, parts);
    } else if (state.kind === "function_call") {
      startCall(state, parts);
      parts.push({
        type: "tool-input-delta",
        id: state.id,
        delta: state.shape.custom ? customPiece(state, delta) : delta,
      });
    }
  }

  /** A piece of a custom call's input as a delta of its `{"input": <text>}` arguments. */
  function customPiece(state: ItemState, piece: string): string {
    const escaped = escapeCustomInputPiece(piece);
    if (state.prefixSent) return escaped;
    state.prefixSent = true;
    return CUSTOM_INPUT_PREFIX + escaped;
  }

  /** Emits what the deltas did not deliver when the complete value extends what was emitted. */
  function appendMissing(state: ItemState, complete: string, parts: CanonicalStreamPart[]): void {
    if (complete.length <= state.emittedLength) return;
    const emitted = readEmitted(state);
    if (complete.startsWith(emitted)) appendDelta(state, complete.slice(emitted.length), parts);
  }

  function closeItem(state: ItemState, item: ResponsesOutputItemWire | undefined): CanonicalStreamPart[] {
    const parts: CanonicalStreamPart[] = [];
    state.done = true;
    if (state.kind === "message") {
      const message = item === undefined ? { text: "", refusal: false } : readMessageText(item);
      if (message.refusal) hasRefusal = true;
      appendMissing(state, message.text, parts);
      if (
        context.nativeSearch === true &&
        state.citations === 0 &&
        item !== undefined &&
        state.block!.started
      ) {
        for (const citation of readMessageCitations(item, state.emittedLength)) {
          parts.push({ type: "citation", id: state.id, citation });
        }
      }
      endContentBlock(state.block!, parts);
    } else if (state.kind === "web_search_call") {
      if (context.nativeSearch === true && item !== undefined) {
        const { call, providerState, result } = readWebSearchCall(item, context.upstreamModel);
        parts.push({ type: "server-tool-call", call, providerState }, { type: "server-tool-result", result });
      }
    } else if (state.kind === "reasoning") {
      if (item !== undefined) appendMissing(state, readReasoningText(item), parts);
      const providerState = item === undefined ? undefined : readReasoningState(item, context.upstreamModel);
      // An item with neither text nor state (no summary requested, no encrypted content) carries
      // nothing and ends without parts: an empty block would only reach clients as an empty
      // thinking block.
      endContentBlock(state.block!, parts, providerState);
    } else if (state.kind === "function_call" && state.shape.custom) {
      closeCustomCall(state, item, parts);
    } else if (state.kind === "function_call") {
      if (state.name === "" && typeof item?.name === "string") state.name = item.name;
      // The complete item is the truth; a server whose done item lacks arguments still sent them
      // in `function_call_arguments.done` or as deltas.
      const itemArguments = item?.arguments;
      const hasItemArguments = itemArguments !== undefined && itemArguments !== null && itemArguments !== "";
      const finalArguments = normalizeArguments(
        hasItemArguments ? itemArguments : (state.finalArguments ?? readEmitted(state)),
      );
      startCall(state, parts);
      appendMissing(state, finalArguments, parts);
      parts.push({ type: "tool-input-end", id: state.id });
      parts.push({
        type: "tool-call",
        id: state.id,
        index: state.toolIndex,
        name: state.name,
        arguments: finalArguments,
        ...state.shape,
      });
    }
    return parts;
  }

  /** The complete item's input is the truth, else `custom_tool_call_input.done`'s, else the deltas'. */
  function closeCustomCall(
    state: ItemState,
    item: ResponsesOutputItemWire | undefined,
    parts: CanonicalStreamPart[],
  ): void {
    if (state.name === "" && typeof item?.name === "string") state.name = item.name;
    const input = typeof item?.input === "string" ? item.input : (state.finalArguments ?? readEmitted(state));
    startCall(state, parts);
    appendMissing(state, input, parts);
    const head = state.prefixSent ? "" : CUSTOM_INPUT_PREFIX;
    state.prefixSent = true;
    parts.push({ type: "tool-input-delta", id: state.id, delta: head + CUSTOM_INPUT_SUFFIX });
    parts.push({ type: "tool-input-end", id: state.id });
    parts.push({
      type: "tool-call",
      id: state.id,
      index: state.toolIndex,
      name: state.name,
      arguments: encodeCustomCallArguments(input),
      ...state.shape,
    });
  }

  /**
   * The output index of an item of the terminal `output`: by its id when the stream announced it
   * (positions can differ: a server may leave items out of `output`), else its position, unless
   * another item holds that position.
   */
  function locateFinalItem(item: ResponsesOutputItemWire, position: number): number {
    const byId = knownIndexOf(item);
    if (byId !== undefined) return byId;
    const occupant = items.get(position);
    if (occupant === undefined || occupant.itemId === undefined || occupant.itemId === item?.id)
      return position;
    return Math.max(...items.keys()) + 1;
  }

  function finishItem(outputIndex: number, item: ResponsesOutputItemWire | undefined): void {
    const state = ensureItem(outputIndex, kindOf(item), item);
    if (state.done) return;
    sequencer.push(outputIndex, closeItem(state, item));
    sequencer.complete(outputIndex);
  }

  function terminate(response: ResponseWire | null | undefined, eventType: string): CanonicalStreamPart[] {
    finished = true;
    readResponseMetadata(response);
    const output = Array.isArray(response?.output) ? response.output : [];
    for (const [position, item] of output.entries()) finishItem(locateFinalItem(item, position), item);
    for (const state of [...items.values()].sort((a, b) => a.outputIndex - b.outputIndex)) {
      if (!state.done) finishItem(state.outputIndex, undefined);
    }
    const parts = sequencer.drainAll();
    const usage: CanonicalUsage | undefined =
      response?.usage === null || response?.usage === undefined
        ? undefined
        : mapResponsesUsage(response.usage);
    if (usage !== undefined) parts.push({ type: "usage", usage });
    const status = response?.status ?? (eventType === "response.incomplete" ? "incomplete" : "completed");
    const incompleteReason = response?.incomplete_details?.reason;
    const hasToolCalls = [...items.values()].some((state) => state.kind === "function_call");
    const rawReason = readRawFinishReason(status, incompleteReason);
    parts.push({
      type: "finish",
      reason: mapResponsesFinishReason(status, incompleteReason, { hasToolCalls, hasRefusal }),
      ...(rawReason === undefined ? {} : { rawReason }),
    });
    return parts;
  }

  function handle(event: ResponsesStreamEventWire, type: string): CanonicalStreamPart[] {
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        readResponseMetadata(event.response);
        return [];
      case "response.output_item.added": {
        const outputIndex = locateItem(event);
        const state = ensureItem(outputIndex, kindOf(event.item), event.item);
        if (state.kind === "function_call" && !state.started) state.shape = readCallShape(event.item);
        const parts: CanonicalStreamPart[] = [];
        // A call opens now (its name is known); a message or reasoning block opens with its first
        // text, or, for reasoning, when it completes with state: empty items yield no blocks.
        if (state.kind === "function_call") startCall(state, parts);
        sequencer.push(outputIndex, parts);
        break;
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (type === "response.refusal.delta") hasRefusal = true;
        pushDelta(event, "message");
        break;
      case "response.output_text.annotation.added":
        if (context.nativeSearch === true) pushCitation(event);
        break;
      case "response.reasoning_summary_text.delta":
        pushDelta(event, "reasoning", `summary-${event.summary_index ?? 0}`);
        break;
      case "response.reasoning_text.delta":
        pushDelta(event, "reasoning", `content-${event.content_index ?? 0}`);
        break;
      case "response.function_call_arguments.delta":
        pushDelta(event, "function_call");
        break;
      case "response.function_call_arguments.done": {
        const state = ensureItem(locate(event), "function_call");
        if (typeof event.arguments === "string") state.finalArguments = event.arguments;
        break;
      }
      case "response.custom_tool_call_input.delta":
        pushDelta(event, "function_call", undefined, true);
        break;
      case "response.custom_tool_call_input.done": {
        const state = ensureCustomCall(locate(event));
        if (typeof event.input === "string") state.finalArguments = event.input;
        break;
      }
      case "response.output_item.done":
        finishItem(locateItem(event), event.item ?? undefined);
        break;
      case "response.completed":
      case "response.incomplete":
        return terminate(event.response, type);
      case "response.failed": {
        const error = classifyResponseError(event.response?.error);
        const usage = event.response?.usage;
        // Before any content the failure stays a plain error (nothing delivered, nothing billed).
        if (!metadataSent || usage === null || usage === undefined) throw error;
        failure = error;
        finished = true;
        return [{ type: "usage", usage: mapResponsesUsage(usage) }];
      }
      case "error":
        throw classifyErrorEvent(event);
      default:
        return [];
    }
    return sequencer.drain();
  }

  /** A `url_citation` of the message's text, at its content part's place in the text. */
  function pushCitation(event: ResponsesStreamEventWire): void {
    const outputIndex = locate(event);
    const state = items.get(outputIndex);
    if (state === undefined || state.kind !== "message" || state.done || !state.block!.started) return;
    if (typeof event.annotation !== "object" || event.annotation === null) return;
    const offset = state.partStarts?.get(event.content_index ?? 0) ?? 0;
    const citation = readUrlCitation(
      event.annotation as Record<string, unknown>,
      offset,
      state.emittedLength,
    );
    if (citation === undefined) return;
    state.citations += 1;
    sequencer.push(outputIndex, [{ type: "citation", id: state.id, citation }]);
  }

  /** A custom call's item; one a server never announced is known as custom from its events. */
  function ensureCustomCall(outputIndex: number): ItemState {
    const state = ensureItem(outputIndex, "function_call");
    if (!state.started && state.kind === "function_call")
      state.shape = pickCallShape({ custom: true, namespace: state.shape.namespace });
    return state;
  }

  function pushDelta(
    event: ResponsesStreamEventWire,
    kind: ItemKind,
    reasoningPart?: string,
    custom = false,
  ): void {
    if (typeof event.delta !== "string" || event.delta === "") return;
    const outputIndex = locate(event);
    const state = custom ? ensureCustomCall(outputIndex) : ensureItem(outputIndex, kind);
    if (state.kind !== kind || state.done) return;
    if (kind === "message") {
      state.partStarts ??= new Map();
      const part = event.content_index ?? 0;
      if (!state.partStarts.has(part)) state.partStarts.set(part, state.emittedLength);
    }
    const parts: CanonicalStreamPart[] = [];
    if (reasoningPart !== undefined) {
      // A new summary part is a new paragraph, exactly as the JSON parse joins them.
      if (
        state.reasoningPart !== undefined &&
        state.reasoningPart !== reasoningPart &&
        state.emittedLength > 0
      ) {
        appendDelta(state, SUMMARY_PART_SEPARATOR, parts);
      }
      state.reasoningPart = reasoningPart;
    }
    appendDelta(state, event.delta, parts);
    sequencer.push(outputIndex, parts);
  }

  function withMetadata(parts: CanonicalStreamPart[]): CanonicalStreamPart[] {
    if (metadataSent || parts.length === 0) return parts;
    metadataSent = true;
    return [{ type: "response-metadata", upstreamId, upstreamModel }, ...parts];
  }

  return {
    get finished() {
      return finished;
    },
    get failure() {
      return failure;
    },
    acceptEvent(event, eventName) {
      if (finished) return [];
      const type = typeof event.type === "string" && event.type !== "" ? event.type : (eventName ?? "");
      return withMetadata(handle(event, type));
    },
  };
}

function kindOf(item: ResponsesOutputItemWire | null | undefined): ItemKind {
  const type = item?.type;
  if (type === "custom_tool_call") return "function_call";
  return type === "message" || type === "function_call" || type === "reasoning" || type === "web_search_call"
    ? type
    : "other";
}

/**
 * Parses a Responses event stream, ending at the terminal event. Throws a GatewayError for an
 * `error` / `response.failed` event, a frame that is not JSON, or a stream that ends without a
 * terminal event; errors of `events` (network, deadlines, aborts) propagate unchanged. The caller
 * decides whether a throw becomes an `error` part (after the first part) or a plain error.
 */
export function parseResponsesStream(
  events: AsyncIterable<SseEvent>,
  context: ResponsesParseContext,
): AsyncGenerator<CanonicalStreamPart> {
  return flattenBatches(parseResponsesBatches(eachAsBatch(events), context));
}

/** parseResponsesStream over batches of events: a batch of parts per batch of events. */
export function parseResponsesBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
  context: ResponsesParseContext,
): AsyncGenerator<CanonicalStreamPart[]> {
  const parser = createResponsesStreamParser(context);
  return parseEventBatches(batches, {
    accept(event, out) {
      const data = event.data.trim();
      if (data === "[DONE]") return "break";
      const payload = readFrameObject(data);
      if (payload === undefined) return "more";
      for (const part of parser.acceptEvent(payload as ResponsesStreamEventWire, event.event)) out.push(part);
      if (parser.failure) throw parser.failure;
      return parser.finished ? "done" : "more";
    },
    finish() {
      throw new GatewayError("provider_unavailable", "upstream stream ended early");
    },
  });
}

/** What an item emitted so far, joined (and kept joined, for a later read). */
function readEmitted(state: ItemState): string {
  if (state.emitted.length > 1) state.emitted = [state.emitted.join("")];
  return state.emitted[0] ?? "";
}
