/**
 * Writes responses SSE events for one output item
 * at a time: `event: <type>\ndata: <json>\n\n`, `type` repeated in the data, `sequence_number` from 0
 * and gap-free on every event, `item_id` equal to the item's id, `content_index` / `summary_index` 0.
 *
 * Per item:
 *   message:       output_item.added → content_part.added → output_text.delta* → output_text.done
 *                  → content_part.done → output_item.done
 *   function_call: output_item.added (arguments "") → function_call_arguments.delta* → .done
 *                  → output_item.done (with the call's `namespace`, when it has one)
 *   custom_tool_call (a call marked `custom`): output_item.added (input "")
 *                  → custom_tool_call_input.delta* (the input text, decoded from the call's
 *                  `{"input": <text>}` argument deltas by custom-input-decoder.ts) → .done
 *                  → output_item.done
 *   reasoning:     output_item.added → [reasoning_summary_part.added → reasoning_summary_text.delta*
 *                  → .done → reasoning_summary_part.done] → output_item.done (with encrypted_content)
 *   message annotations: output_text.annotation.added, one per citation, between the deltas and
 *                  output_text.done; output_text.done, content_part.done and output_item.done carry
 *                  them all
 *   web_search_call (a server tool's call): output_item.added (status in_progress, no action)
 *                  → web_search_call.in_progress → .searching; on its result: .completed (not for
 *                  a failed call: the format has no failed event) → output_item.done (status, action)
 *   image_generation_call (the image tool's call): the same with image_generation_call.in_progress
 *                  → .generating, then .completed (not for a failed call) → output_item.done
 *                  (status, and the image in `result`); no partial images
 *
 * A server tool's item is not "the open item": the calls of one round are all added before any
 * of them is done, so it keeps its slot in `output` (in progress) from the moment it is added, and
 * the next item's output index counts it. The stream encoder adds one only while no other item is
 * open, so output indexes stay contiguous.
 *
 * `hi.tool_event` frames ride as `keepalive` events (writeToolEvent): the official SDK's stream
 * helper ignores that type, while any other unknown type makes it throw.
 *
 * The final item of each `output_item.done` comes from encode-output-items.ts, the same builders the
 * non-streaming encoder uses, and is kept in `output` for the terminal `response.completed`.
 *
 * An item's id goes out with `output_item.added`, so only an item whose content is known when it
 * opens can carry itself in its id (item-seal.ts): a reasoning item opened with its whole content.
 *
 * Hot path: the `"item_id":…,"output_index":…` members of an item are serialised once when it opens;
 * a delta costs one JSON.stringify of the delta text.
 */

import {
  type OpaqueReasoningState,
  type ResponsesCallShape,
  readCustomCallInput,
  type ServerToolCall,
  type ServerToolResult,
} from "../../canonical/index.js";
import type { ToolEventPayload } from "../shared/tool-event-payload.js";
import { CustomInputDecoder } from "./custom-input-decoder.js";
import {
  callItemType,
  createItemId,
  createServerToolItemId,
  encodeFunctionCallItem,
  encodeMessageItem,
  encodeOutputText,
  encodeReasoningItem,
  encodeServerToolItem,
  type ResponsesOutputItem,
  type ResponsesServerToolItem,
  type ResponsesUrlCitation,
  sealOutputItem,
  serverToolItemType,
} from "./encode-output-items.js";
import type { ItemSeal } from "./item-seal.js";
import { QuotedTexts } from "./reuse-quoted-text.js";

interface OpenItem {
  type: "reasoning" | "message" | "function_call" | "custom_tool_call";
  id: string;
  outputIndex: number;
  /** `"item_id":"…","output_index":N` */
  members: string;
  /** Text, summary text or arguments so far, in the pieces they came in (joined once, at the close). */
  pieces: string[];
  /** UTF-16 units in `pieces`. */
  length: number;
  /** Reasoning: whether the summary part was opened (only when there is summary text). */
  summaryOpen: boolean;
  callId: string;
  name: string;
  /** Message: the output_text's annotations so far. */
  annotations: ResponsesUrlCitation[];
  /** Calls: `namespace` (and `custom`). */
  shape: ResponsesCallShape;
  /** Custom calls: decodes their argument deltas into input text (then `pieces` hold the text). */
  decoder?: CustomInputDecoder;
}

/** A server tool's item added and not done yet. */
interface OpenToolItem {
  type: ResponsesServerToolItem["type"];
  id: string;
  outputIndex: number;
  members: string;
  call: ServerToolCall;
}

/** The progress events of each server tool item: in progress, working, completed. */
const TOOL_ITEM_EVENTS = {
  web_search_call: ["in_progress", "searching", "completed"],
  image_generation_call: ["in_progress", "generating", "completed"],
} as const;

export class ResponsesEventWriter {
  /** Items closed so far, in output order. */
  readonly output: ResponsesOutputItem[] = [];
  /** Long texts of closed items, quoted once for every closing frame that holds them. */
  readonly quotedTexts = new QuotedTexts();
  private sequence = 0;
  private item: OpenItem | undefined;
  /** By canonical call id. */
  private readonly toolItems = new Map<string, OpenToolItem>();

  /** With `seal`, reasoning items opened with their content carry it in their id. */
  constructor(
    private readonly requestId: string,
    private readonly seal?: ItemSeal,
  ) {}

  /** Type of the item currently open, if any. */
  get openItemType(): OpenItem["type"] | undefined {
    return this.item?.type;
  }

  /** Length (UTF-16 units) of the open message's text so far; 0 when no message is open. */
  get openTextLength(): number {
    return this.item?.type === "message" ? this.item.length : 0;
  }

  writeResponseEvent(type: string, responseJson: string): string {
    return this.writeEvent(type, `"response":${responseJson}`);
  }

  writeEvent(type: string, members: string): string {
    return `event: ${type}\ndata: {"type":"${type}",${members},"sequence_number":${this.sequence++}}\n\n`;
  }

  openMessage(): string {
    const item = this.openItem("message", "", "");
    return (
      this.writeItemAdded(item, {
        id: item.id,
        type: "message",
        status: "in_progress",
        role: "assistant",
        content: [],
      }) +
      this.writeEvent(
        "response.content_part.added",
        `${item.members},"content_index":0,"part":${JSON.stringify(encodeOutputText(""))}`,
      )
    );
  }

  appendText(delta: string): string {
    const item = this.item!;
    addPiece(item, delta);
    return this.writeEvent(
      "response.output_text.delta",
      `${item.members},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]`,
    );
  }

  /** An annotation of the open message's text (offsets into the whole output_text). */
  addAnnotation(annotation: ResponsesUrlCitation): string {
    const item = this.item!;
    const index = item.annotations.push(annotation) - 1;
    return this.writeEvent(
      "response.output_text.annotation.added",
      `${item.members},"content_index":0,"annotation_index":${index},"annotation":${JSON.stringify(annotation)}`,
    );
  }

  /**
   * The wire id of a server tool call that has an item (encode-output-items.ts
   * `serverToolItemType`): its item's id once it was added, else the id such an item gets (sealed
   * with the writer's seal), which is what events name.
   */
  serverToolItemId(call: Pick<ServerToolCall, "id" | "tool">): string {
    const open = this.toolItems.get(call.id);
    if (open !== undefined) return open.id;
    return this.createServerToolItemId(toolItemType(call), call.id);
  }

  hasServerToolItem(callId: string): boolean {
    return this.toolItems.has(callId);
  }

  /** Adds the call's item in progress; no other item may be open. */
  openServerToolItem(call: ServerToolCall): string {
    const type = toolItemType(call);
    const id = this.createServerToolItemId(type, call.id);
    const outputIndex = this.output.length;
    const members = `"item_id":${JSON.stringify(id)},"output_index":${outputIndex}`;
    this.toolItems.set(call.id, { type, id, outputIndex, members, call });
    const added = { id, type, status: "in_progress" } as const;
    this.output.push(added);
    const [inProgress, working] = TOOL_ITEM_EVENTS[type];
    return (
      this.writeEvent(
        "response.output_item.added",
        `"output_index":${outputIndex},"item":${JSON.stringify(added)}`,
      ) +
      this.writeEvent(`response.${type}.${inProgress}`, members) +
      this.writeEvent(`response.${type}.${working}`, members)
    );
  }

  /**
   * Finishes the call's item with its result (`undefined`: the call never got one, so it failed);
   * adds the item first when its call was never seen.
   */
  closeServerToolItem(call: ServerToolCall, result: ServerToolResult | undefined): string {
    let frames = this.toolItems.has(call.id) ? "" : this.openServerToolItem(call);
    const open = this.toolItems.get(call.id)!;
    this.toolItems.delete(call.id);
    const item = encodeServerToolItem(open.id, call.tool, call.input, result);
    if (item.status === "completed")
      frames += this.writeEvent(`response.${open.type}.${TOOL_ITEM_EVENTS[open.type][2]}`, open.members);
    this.output[open.outputIndex] = item;
    return (
      frames +
      this.writeEvent(
        "response.output_item.done",
        `"output_index":${open.outputIndex},"item":${JSON.stringify(item)}`,
      )
    );
  }

  /** Finishes, as failed, every server tool item whose result never came. */
  closeUnansweredServerToolItems(): string {
    let frames = "";
    for (const { call } of [...this.toolItems.values()]) frames += this.closeServerToolItem(call, undefined);
    return frames;
  }

  /**
   * A `hi.tool_event` frame: a `keepalive` event (ignored by the SDK's stream helper, yielded to raw
   * iteration) carrying the payload, numbered in the same sequence as every other event.
   */
  writeToolEvent(payload: ToolEventPayload): string {
    return (
      `event: hi.tool_event\ndata: {"type":"keepalive","sequence_number":${this.sequence++},` +
      `"hi_tool_event":${JSON.stringify(payload)}}\n\n`
    );
  }

  /**
   * `content`: the item's whole summary text and state, known up front (and then exactly what is
   * appended and closed with), so its id can carry it.
   */
  openReasoning(content?: { text: string; providerState?: OpaqueReasoningState }): string {
    const item = this.openItem("reasoning", "", "");
    if (content !== undefined && this.seal !== undefined) {
      const sealed = sealOutputItem(
        encodeReasoningItem(item.id, content.text, content.providerState),
        this.seal,
      );
      this.renameItem(item, sealed.id);
    }
    return this.writeItemAdded(item, { id: item.id, type: "reasoning", summary: [] });
  }

  appendReasoning(delta: string): string {
    const item = this.item!;
    let frames = "";
    if (!item.summaryOpen) {
      item.summaryOpen = true;
      frames = this.writeEvent(
        "response.reasoning_summary_part.added",
        `${item.members},"summary_index":0,"part":{"type":"summary_text","text":""}`,
      );
    }
    addPiece(item, delta);
    return (
      frames +
      this.writeEvent(
        "response.reasoning_summary_text.delta",
        `${item.members},"summary_index":0,"delta":${JSON.stringify(delta)}`,
      )
    );
  }

  /** A function_call item, or a custom_tool_call item for a call marked `custom`. */
  openFunctionCall(callId: string, name: string, shape: ResponsesCallShape = {}): string {
    const type = callItemType(shape);
    const item = this.openItem(type, callId, name);
    item.shape = shape;
    const namespace = shape.namespace === undefined ? {} : { namespace: shape.namespace };
    if (type === "custom_tool_call") {
      item.decoder = new CustomInputDecoder();
      return this.writeItemAdded(item, {
        id: item.id,
        type,
        status: "in_progress",
        call_id: callId,
        name,
        input: "",
        ...namespace,
      });
    }
    return this.writeItemAdded(item, {
      id: item.id,
      type,
      status: "in_progress",
      call_id: callId,
      name,
      arguments: "",
      ...namespace,
    });
  }

  appendArguments(delta: string): string {
    const item = this.item!;
    if (item.decoder === undefined) return this.appendArgumentsTo(item, delta);
    return this.appendInputTo(item, item.decoder.decode(delta));
  }

  /**
   * Closes the open item (nothing when none is open). `finalArguments` are a function call's complete
   * arguments (default: what was streamed); `providerState` is a reasoning block's opaque state;
   * `incomplete`: the response was cut, so a message closed now says `incomplete`.
   */
  closeItem(
    options: { finalArguments?: string; providerState?: OpaqueReasoningState; incomplete?: boolean } = {},
  ): string {
    const item = this.item;
    if (item === undefined) return "";
    this.item = undefined;
    if (item.type === "message") return this.closeMessage(item, options.incomplete === true);
    if (item.type === "reasoning") return this.closeReasoning(item, options.providerState);
    if (item.type === "custom_tool_call") return this.closeCustomToolCall(item, options.finalArguments);
    return this.closeFunctionCall(item, options.finalArguments);
  }

  /** `completeArguments`: the call's complete `{"input": <text>}` arguments (default: what was streamed). */
  private closeCustomToolCall(item: OpenItem, completeArguments: string | undefined): string {
    let frames = "";
    const streamed = readText(item);
    const input = completeArguments === undefined ? streamed : readCustomCallInput(completeArguments);
    if (input !== streamed && input.startsWith(streamed)) {
      frames = this.appendInputTo(item, input.slice(streamed.length));
    }
    return (
      frames +
      this.writeEvent(
        "response.custom_tool_call_input.done",
        `${item.members},"input":${this.quotedTexts.quote(input)}`,
      ) +
      this.writeItemDone(
        item,
        encodeFunctionCallItem(
          item.id,
          item.callId,
          item.name,
          completeArguments ?? "",
          { custom: true, namespace: item.shape.namespace },
          input,
        ),
      )
    );
  }

  private appendInputTo(item: OpenItem, text: string): string {
    if (text === "") return "";
    addPiece(item, text);
    return this.writeEvent(
      "response.custom_tool_call_input.delta",
      `${item.members},"delta":${JSON.stringify(text)}`,
    );
  }

  private closeMessage(item: OpenItem, incomplete: boolean): string {
    const whole = readText(item);
    const text = this.quotedTexts.quote(whole);
    const annotations = JSON.stringify(item.annotations);
    // The part as encodeOutputText makes it, with the text quoted once.
    const part = `{"type":"output_text","text":${text},"annotations":${annotations},"logprobs":[]}`;
    return (
      this.writeEvent(
        "response.output_text.done",
        `${item.members},"content_index":0,"text":${text},"annotations":${annotations},"logprobs":[]`,
      ) +
      this.writeEvent("response.content_part.done", `${item.members},"content_index":0,"part":${part}`) +
      this.writeItemDone(
        item,
        encodeMessageItem(item.id, whole, item.annotations, incomplete ? "incomplete" : "completed"),
      )
    );
  }

  private closeReasoning(item: OpenItem, providerState: OpaqueReasoningState | undefined): string {
    let frames = "";
    const whole = readText(item);
    if (item.summaryOpen) {
      const text = this.quotedTexts.quote(whole);
      frames =
        this.writeEvent(
          "response.reasoning_summary_text.done",
          `${item.members},"summary_index":0,"text":${text}`,
        ) +
        this.writeEvent(
          "response.reasoning_summary_part.done",
          `${item.members},"summary_index":0,"part":{"type":"summary_text","text":${text}}`,
        );
    }
    return frames + this.writeItemDone(item, encodeReasoningItem(item.id, whole, providerState));
  }

  /** `completeArguments`: the call's complete arguments (default: what was streamed). */
  private closeFunctionCall(item: OpenItem, completeArguments: string | undefined): string {
    let frames = "";
    const streamed = readText(item);
    const finalArguments = completeArguments ?? streamed;
    // An adapter may complete what it streamed (e.g. `{}` for a call that streamed nothing): send the
    // rest as a delta too, so clients that only concatenate deltas end up byte-exact.
    if (finalArguments !== streamed && finalArguments.startsWith(streamed)) {
      frames = this.appendArgumentsTo(item, finalArguments.slice(streamed.length));
    }
    return (
      frames +
      this.writeEvent(
        "response.function_call_arguments.done",
        `${item.members},"name":${JSON.stringify(item.name)},"arguments":${JSON.stringify(finalArguments)}`,
      ) +
      this.writeItemDone(
        item,
        encodeFunctionCallItem(item.id, item.callId, item.name, finalArguments, item.shape),
      )
    );
  }

  private appendArgumentsTo(item: OpenItem, delta: string): string {
    addPiece(item, delta);
    return this.writeEvent(
      "response.function_call_arguments.delta",
      `${item.members},"delta":${JSON.stringify(delta)}`,
    );
  }

  private openItem(type: OpenItem["type"], callId: string, name: string): OpenItem {
    // Items open one at a time, so the next output index is the number of items added so far (closed
    // ones and server tool items in progress).
    const outputIndex = this.output.length;
    const id = createItemId(type, this.requestId, outputIndex);
    this.item = {
      type,
      id,
      outputIndex,
      members: `"item_id":${JSON.stringify(id)},"output_index":${outputIndex}`,
      pieces: [],
      length: 0,
      summaryOpen: false,
      callId,
      name,
      annotations: [],
      shape: {},
    };
    return this.item;
  }

  private createServerToolItemId(type: ResponsesServerToolItem["type"], callId: string): string {
    const item = { id: createServerToolItemId(type, callId), type, status: "in_progress" } as const;
    return this.seal === undefined ? item.id : sealOutputItem(item, this.seal).id;
  }

  private renameItem(item: OpenItem, id: string): void {
    item.id = id;
    item.members = `"item_id":${JSON.stringify(id)},"output_index":${item.outputIndex}`;
  }

  private writeItemAdded(item: OpenItem, wireItem: object): string {
    return this.writeEvent(
      "response.output_item.added",
      `"output_index":${item.outputIndex},"item":${JSON.stringify(wireItem)}`,
    );
  }

  private writeItemDone(item: OpenItem, finalItem: ResponsesOutputItem): string {
    this.output[item.outputIndex] = finalItem;
    return this.writeEvent(
      "response.output_item.done",
      `"output_index":${item.outputIndex},"item":${this.quotedTexts.stringifyReusing(finalItem)}`,
    );
  }
}

/** Only calls of tools that have an item reach the writer's item methods. */
function toolItemType(call: Pick<ServerToolCall, "tool">): ResponsesServerToolItem["type"] {
  const type = serverToolItemType(call.tool);
  if (type === undefined) throw new Error(`server tool ${call.tool} has no Responses item`);
  return type;
}

function addPiece(item: OpenItem, piece: string): void {
  item.pieces.push(piece);
  item.length += piece.length;
}

/** The item's text so far, joined (and kept joined, for a later read). */
function readText(item: OpenItem): string {
  if (item.pieces.length === 0) return "";
  if (item.pieces.length > 1) item.pieces = [item.pieces.join("")];
  return item.pieces[0];
}
