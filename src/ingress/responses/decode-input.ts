/**
 * `instructions` + `input` → canonical `system` + `messages`.
 *
 * - A string `input` is one user message.
 * - `instructions` first, then `system` and `developer` messages, in order, form the canonical system
 *   prompt (hoisted from anywhere: every upstream format but OpenAI's keeps it apart from the turns).
 * - Assistant-side items — reasoning, assistant messages, function_call — that follow each other form
 *   ONE canonical assistant message, in item order; consecutive function_call_output items form one
 *   tool message. This is how a stateless client replays a turn (reasoning, then its function calls,
 *   then their outputs) and what providers that check reasoning/tool adjacency need.
 * - Assistant text that is empty or whitespace only is dropped (Anthropic rejects blank text blocks).
 * - A reasoning item's text is its summary texts joined by a blank line (or its raw `content` when the
 *   summary is empty); `encrypted_content` becomes opaque provider state, see decodeReasoningItem.
 * - A reasoning item whose state names a tool call (`toolCallId`: the carrier encode-output-items.ts
 *   writes next to a call with state) is no reasoning: its state goes back onto that call in the same
 *   assistant turn, wherever the item stands in it, and is dropped when the turn has no such call.
 * - An `item_reference` to an item the gateway sealed into its id (item-seal.ts) is that item, in
 *   its place; a reference to anything else is `invalid_request` naming `input[i].id`, saying why.
 * - A `web_search_call` or `image_generation_call` item, whole or by reference, is dropped: the
 *   gateway ran that tool itself and fed its result to the model in the same run, and the answer
 *   that followed holds what the model took from it; no upstream could take the item back anyway.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  ReasoningPart,
  TextPart,
  ToolResultPart,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { attachToolCallStates } from "../messages/tool-call-state-carrier.js";
import { unwrapOpaqueState } from "../opaque-state.js";
import {
  decodeAssistantContent,
  decodeSystemContent,
  decodeToolOutput,
  decodeUserContent,
} from "./decode-content-parts.js";
import {
  inputItemSchema,
  KNOWN_INPUT_ITEM_TYPES,
  type ResponsesInputItemBody,
  type ResponsesOtherItemBody,
  type ResponsesReasoningItemBody,
} from "./input-item-schema.js";
import { type ItemSeal, MAX_SEALED_ITEM_BYTES } from "./item-seal.js";

/** Provider kind whose native reasoning state travels in `encrypted_content`. */
export const NATIVE_PROVIDER_KIND = "openai-responses";

const SUMMARY_SEPARATOR = "\n\n";

export interface DecodedConversation {
  system: TextPart[];
  messages: CanonicalMessage[];
}

export function decodeInput(
  input: string | readonly (ResponsesInputItemBody | ResponsesOtherItemBody)[],
  instructions: string | null | undefined,
  itemSeal?: ItemSeal,
): DecodedConversation {
  const system: TextPart[] = [];
  if (typeof instructions === "string" && instructions !== "")
    system.push({ type: "text", text: instructions });
  if (typeof input === "string") {
    return { system, messages: [{ role: "user", content: [{ type: "text", text: input }] }] };
  }
  const messages: CanonicalMessage[] = [];
  input.forEach((given, index) => {
    const param = `input[${index}]`;
    if (!isKnownItem(given)) {
      appendVerbatimItem(messages, given, param);
      return;
    }
    const item = given.type === "item_reference" ? resolveItemReference(given.id, param, itemSeal) : given;
    switch (item.type) {
      case undefined:
      case "message":
        if (item.role === "system" || item.role === "developer") {
          for (const part of decodeSystemContent(item.content, `${param}.content`, item.role))
            if (part.text !== "") system.push(part);
        } else if (item.role === "user") {
          messages.push({ role: "user", content: decodeUserContent(item.content, `${param}.content`) });
        } else {
          const text = decodeAssistantContent(item.content, `${param}.content`);
          appendAssistantContent(
            messages,
            text.filter((part) => part.text.trim() !== ""),
          );
        }
        break;
      case "function_call":
        appendAssistantContent(messages, [
          {
            type: "tool-call",
            id: item.call_id,
            name: item.name,
            arguments: item.arguments,
            // The tool group of a call an OpenAI Responses route made (Codex's namespace tools).
            ...(typeof item.namespace === "string" && item.namespace !== ""
              ? { namespace: item.namespace }
              : {}),
          },
        ]);
        break;
      case "function_call_output":
        appendToolResult(messages, {
          type: "tool-result",
          toolCallId: item.call_id,
          content: decodeToolOutput(item.output, `${param}.output`),
        });
        break;
      case "reasoning": {
        const reasoning = decodeReasoningItem(item);
        if (reasoning !== undefined) appendAssistantContent(messages, [reasoning]);
        break;
      }
      case "web_search_call":
      case "image_generation_call":
        break;
    }
  });
  for (const message of messages) {
    if (message.role === "assistant") message.content = attachToolCallStates(message.content);
  }
  return { system, messages };
}

/** Why a reference cannot be resolved, by what its id turned out to be. */
const UNRESOLVABLE = {
  foreign:
    "which is not an item this gateway produced: the gateway keeps no state, so it resolves only " +
    "references to items of its own responses, whose ids carry them",
  "own-plain":
    "an item of a gateway response whose id does not carry it: the request set store: false, the " +
    `item was over ${MAX_SEALED_ITEM_BYTES} bytes, or it is a streamed message (its id goes out ` +
    "before its text)",
  forged:
    "whose id was not sealed by this gateway (altered, forged, or sealed under another key: every " +
    "instance of a deployment must share INTERNAL_SHARED_SECRET)",
  "no-seal": "which cannot be resolved here: the gateway keeps no state",
} as const;

/** Ids of the gateway's own items without a seal: `<rs|msg|fc>_<request id>_<index>`. */
const PLAIN_OWN_ID = /^(?:rs|msg|fc|ctc)_[A-Za-z0-9_-]{22}_\d+$/;

/**
 * The item an `item_reference` names, from the id the gateway sealed it into (only reasoning,
 * assistant message, web_search_call and image_generation_call items are sealed). Clients send these when they believe the server stored the
 * previous response (the AI SDK does, unless the request sets `store: false`).
 */
function resolveItemReference(
  id: string,
  param: string,
  itemSeal: ItemSeal | undefined,
): ResponsesInputItemBody {
  const opened = itemSeal?.open(id);
  if (opened?.kind === "item") {
    const parsed = inputItemSchema.safeParse(opened.item);
    const item = parsed.success && isKnownItem(parsed.data) ? parsed.data : undefined;
    if (
      item?.type === "reasoning" ||
      item?.type === "web_search_call" ||
      item?.type === "image_generation_call" ||
      (item?.type === "message" && item.role === "assistant")
    ) {
      return item;
    }
  }
  const reason: keyof typeof UNRESOLVABLE =
    opened === undefined
      ? "no-seal"
      : opened.kind !== "plain"
        ? "forged"
        : PLAIN_OWN_ID.test(id)
          ? "own-plain"
          : "foreign";
  throw GatewayError.invalidRequest(
    `${param} is an item_reference to "${truncate(id)}", ${UNRESOLVABLE[reason]}; send the item itself ` +
      "(clients replay whole items when the request sets store: false)",
    `${param}.id`,
  );
}

function truncate(id: string): string {
  return id.length > 80 ? `${id.slice(0, 77)}...` : id;
}

/**
 * A reasoning item → a reasoning part, or undefined when it carries neither text nor state.
 * `encrypted_content` the gateway produced unwraps to the provider state it wrapped; any other string
 * is OpenAI's own (a client that talked to OpenAI directly before) and keeps the item `id`, which
 * OpenAI needs next to the encrypted content when the item is replayed.
 */
export function decodeReasoningItem(item: ResponsesReasoningItemBody): ReasoningPart | undefined {
  let text = item.summary.map((part) => part.text).join(SUMMARY_SEPARATOR);
  if (text === "" && item.content) text = item.content.map((part) => part.text).join(SUMMARY_SEPARATOR);
  const encrypted = item.encrypted_content;
  if (encrypted === null || encrypted === undefined || encrypted === "") {
    return text === "" ? undefined : { type: "reasoning", text };
  }
  const providerState = unwrapOpaqueState(encrypted, NATIVE_PROVIDER_KIND, "encryptedContent");
  // Only native state comes back as the very string it was given.
  const isNative = providerState.encryptedContent === encrypted;
  if (isNative && typeof item.id === "string") providerState.itemId = item.id;
  return { type: "reasoning", text, providerState };
}

function isKnownItem(item: ResponsesInputItemBody | ResponsesOtherItemBody): item is ResponsesInputItemBody {
  return item.type === undefined || KNOWN_INPUT_ITEM_TYPES.has(item.type);
}

/**
 * An item of a type the gateway does not know, kept for OpenAI Responses upstreams in its place:
 * an output (`custom_tool_call_output`, `*_output`) stands as a turn of its own on the user side,
 * any other item (`custom_tool_call`, `mcp_call`, `compaction`) joins the assistant turn it is in,
 * after what came before it. Adapters of other wire families leave it out (a turn of nothing
 * else with it). A custom_tool_call of a gateway answer goes without the gateway's item id.
 */
function appendVerbatimItem(
  messages: CanonicalMessage[],
  given: ResponsesOtherItemBody,
  param: string,
): void {
  // A custom_tool_call the gateway answered carries the gateway's item id, which no upstream
  // issued: a stateless upstream would look it up and fail, so the item goes without it.
  const item = given.type === "custom_tool_call" && isOwnItemId(given.id) ? withoutId(given) : given;
  const last = messages[messages.length - 1];
  const extra = { family: "responses" as const, param, kind: item.type, index: 0, block: item };
  if (!item.type.endsWith("_output") && last?.role === "assistant") {
    last.extraBlocks ??= [];
    extra.index = last.content.length + last.extraBlocks.length;
    last.extraBlocks.push(extra);
  } else {
    messages.push({
      role: item.type.endsWith("_output") ? "user" : "assistant",
      content: [],
      extraBlocks: [extra],
    });
  }
}

function isOwnItemId(id: unknown): boolean {
  return typeof id === "string" && PLAIN_OWN_ID.test(id);
}

function withoutId(item: ResponsesOtherItemBody): ResponsesOtherItemBody {
  const { id: _id, ...rest } = item;
  return rest as ResponsesOtherItemBody;
}

function appendAssistantContent(messages: CanonicalMessage[], parts: AssistantContentPart[]): void {
  if (parts.length === 0) return;
  const last = messages[messages.length - 1];
  // A loop, not push(...parts): spreading very many parts would overflow the stack.
  if (last?.role === "assistant") for (const part of parts) last.content.push(part);
  else messages.push({ role: "assistant", content: parts });
}

function appendToolResult(messages: CanonicalMessage[], result: ToolResultPart): void {
  const last = messages[messages.length - 1];
  if (last?.role === "tool") last.content.push(result);
  else messages.push({ role: "tool", content: [result] });
}
