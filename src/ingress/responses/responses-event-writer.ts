/**
 * Writes responses SSE events for one output item
 * at a time: `event: <type>\ndata: <json>\n\n`, `type` repeated in the data, `sequence_number` from 0
 * and gap-free on every event, `item_id` equal to the item's id, `content_index` / `summary_index` 0.
 *
 * Per item:
 *   message:       output_item.added → content_part.added → output_text.delta* → output_text.done
 *                  → content_part.done → output_item.done
 *   function_call: output_item.added (arguments "") → function_call_arguments.delta* → .done
 *                  → output_item.done
 *   reasoning:     output_item.added → [reasoning_summary_part.added → reasoning_summary_text.delta*
 *                  → .done → reasoning_summary_part.done] → output_item.done (with encrypted_content)
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
import type { OpaqueReasoningState } from "../../canonical/index.js";
import {
  createItemId,
  encodeFunctionCallItem,
  encodeMessageItem,
  encodeOutputText,
  encodeReasoningItem,
  type ResponsesOutputItem,
  sealOutputItem,
} from "./encode-output-items.js";
import type { ItemSeal } from "./item-seal.js";

interface OpenItem {
  type: ResponsesOutputItem["type"];
  id: string;
  outputIndex: number;
  /** `"item_id":"…","output_index":N` */
  members: string;
  /** Text, summary text or arguments so far. */
  text: string;
  /** Reasoning: whether the summary part was opened (only when there is summary text). */
  summaryOpen: boolean;
  callId: string;
  name: string;
}

export class ResponsesEventWriter {
  /** Items closed so far, in output order. */
  readonly output: ResponsesOutputItem[] = [];
  private sequence = 0;
  private item: OpenItem | undefined;

  /** With `seal`, reasoning items opened with their content carry it in their id. */
  constructor(
    private readonly requestId: string,
    private readonly seal?: ItemSeal,
  ) {}

  /** Type of the item currently open, if any. */
  get openItemType(): ResponsesOutputItem["type"] | undefined {
    return this.item?.type;
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
    item.text += delta;
    return this.writeEvent(
      "response.output_text.delta",
      `${item.members},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]`,
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
    item.text += delta;
    return (
      frames +
      this.writeEvent(
        "response.reasoning_summary_text.delta",
        `${item.members},"summary_index":0,"delta":${JSON.stringify(delta)}`,
      )
    );
  }

  openFunctionCall(callId: string, name: string): string {
    const item = this.openItem("function_call", callId, name);
    return this.writeItemAdded(item, {
      id: item.id,
      type: "function_call",
      status: "in_progress",
      call_id: callId,
      name,
      arguments: "",
    });
  }

  appendArguments(delta: string): string {
    return this.appendArgumentsTo(this.item!, delta);
  }

  /**
   * Closes the open item (nothing when none is open). `finalArguments` are a function call's complete
   * arguments (default: what was streamed); `providerState` is a reasoning block's opaque state.
   */
  closeItem(options: { finalArguments?: string; providerState?: OpaqueReasoningState } = {}): string {
    const item = this.item;
    if (item === undefined) return "";
    this.item = undefined;
    if (item.type === "message") return this.closeMessage(item);
    if (item.type === "reasoning") return this.closeReasoning(item, options.providerState);
    return this.closeFunctionCall(item, options.finalArguments ?? item.text);
  }

  private closeMessage(item: OpenItem): string {
    const text = JSON.stringify(item.text);
    return (
      this.writeEvent(
        "response.output_text.done",
        `${item.members},"content_index":0,"text":${text},"logprobs":[]`,
      ) +
      this.writeEvent(
        "response.content_part.done",
        `${item.members},"content_index":0,"part":${JSON.stringify(encodeOutputText(item.text))}`,
      ) +
      this.writeItemDone(item, encodeMessageItem(item.id, item.text))
    );
  }

  private closeReasoning(item: OpenItem, providerState: OpaqueReasoningState | undefined): string {
    let frames = "";
    if (item.summaryOpen) {
      const text = JSON.stringify(item.text);
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
    return frames + this.writeItemDone(item, encodeReasoningItem(item.id, item.text, providerState));
  }

  private closeFunctionCall(item: OpenItem, finalArguments: string): string {
    let frames = "";
    // An adapter may complete what it streamed (e.g. `{}` for a call that streamed nothing): send the
    // rest as a delta too, so clients that only concatenate deltas end up byte-exact.
    if (finalArguments !== item.text && finalArguments.startsWith(item.text)) {
      frames = this.appendArgumentsTo(item, finalArguments.slice(item.text.length));
    }
    return (
      frames +
      this.writeEvent(
        "response.function_call_arguments.done",
        `${item.members},"name":${JSON.stringify(item.name)},"arguments":${JSON.stringify(finalArguments)}`,
      ) +
      this.writeItemDone(item, encodeFunctionCallItem(item.id, item.callId, item.name, finalArguments))
    );
  }

  private appendArgumentsTo(item: OpenItem, delta: string): string {
    item.text += delta;
    return this.writeEvent(
      "response.function_call_arguments.delta",
      `${item.members},"delta":${JSON.stringify(delta)}`,
    );
  }

  private openItem(type: OpenItem["type"], callId: string, name: string): OpenItem {
    // Items are strictly sequential, so the next output index is the number of items closed so far.
    const outputIndex = this.output.length;
    const id = createItemId(type, this.requestId, outputIndex);
    this.item = {
      type,
      id,
      outputIndex,
      members: `"item_id":${JSON.stringify(id)},"output_index":${outputIndex}`,
      text: "",
      summaryOpen: false,
      callId,
      name,
    };
    return this.item;
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
    this.output.push(finalItem);
    return this.writeEvent(
      "response.output_item.done",
      `"output_index":${item.outputIndex},"item":${JSON.stringify(finalItem)}`,
    );
  }
}
