/**
 * Canonical system + messages → Anthropic `system` and `messages`.
 *
 * - Text is kept byte-exact, but empty and whitespace-only text blocks are never sent: Anthropic
 *   rejects them ("text content blocks must contain non-whitespace text"). An assistant turn left
 *   empty is dropped.
 * - Reasoning is forwarded only as the provider's own state, byte-identical: `thinking` with its
 *   signature or `redacted_thinking` with its data, and only when the state was produced by this
 *   provider kind and upstream model (`isStateForUpstream`). Reasoning without usable state
 *   (another provider's, another model's, or plain text from a format that carries none) is
 *   dropped — never turned into visible text, and never sent unsigned, which Anthropic rejects.
 * - Server tools Anthropic ran itself go back as the blocks it sent (`server_tool_use`, results with
 *   their encrypted content), only to the same provider kind and model; elsewhere they are dropped.
 * - Tool calls become `tool_use` with `input` parsed from the argument JSON. Anthropic requires an
 *   object, so arguments that are not a JSON object (invalid JSON, an array, a number) are sent as
 *   `{}`; the model sees the call happened and the tool result still follows.
 * - Canonical `tool` messages become a user turn of `tool_result` blocks (text and images;
 *   a PDF passed as an image becomes a document block, which tool results accept).
 * - Consecutive turns of one role are merged into one turn (Anthropic wants all results of a
 *   parallel round in one user message, and a tool result followed by user text is one user turn),
 *   with `tool_result` blocks first, as Anthropic requires right after a `tool_use` turn.
 * - Participant `name`s have no Anthropic field and are not sent.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  TextPart,
  ToolResultPart,
  VerbatimBlock,
} from "../../canonical/index.js";
import { isStateForUpstream } from "../shared/is-state-for-upstream.js";
import { convertFile, convertImage, withCacheControl } from "./convert-media.js";
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicNativeToolBlock,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicVerbatimBlock,
} from "./wire-types.js";

export const PROVIDER_KIND = "anthropic";

/** System parts as text blocks (cache markers kept); undefined when nothing non-blank remains. */
export function convertSystem(system: TextPart[]): AnthropicTextBlock[] | undefined {
  const blocks = system.flatMap(convertText);
  return blocks.length > 0 ? blocks : undefined;
}

export function convertMessages(
  messages: CanonicalMessage[],
  context: { upstreamModel: string },
): AnthropicMessage[] {
  const turns: AnthropicMessage[] = [];
  for (let messageIndex = 0; messageIndex < messages.length; messageIndex++) {
    const message = messages[messageIndex];
    let content: AnthropicContentBlock[] = [];
    switch (message.role) {
      case "user": {
        const converted = message.content.map((part, partIndex): AnthropicContentBlock[] => {
          if (part.type === "text") return convertText(part);
          if (part.type === "image") return [convertImage(part, locate(messageIndex, partIndex))];
          return [convertFile(part, locate(messageIndex, partIndex))];
        });
        content = placeVerbatimBlocks(converted, message.extraBlocks ?? []);
        break;
      }
      case "assistant": {
        const converted = message.content.map((part): AnthropicContentBlock[] => {
          const blocks: AnthropicContentBlock[] = [];
          convertAssistantPart(blocks, part, context.upstreamModel);
          return blocks;
        });
        content = placeVerbatimBlocks(converted, message.extraBlocks ?? []);
        break;
      }
      case "tool":
        for (let partIndex = 0; partIndex < message.content.length; partIndex++) {
          content.push(convertToolResult(message.content[partIndex], locate(messageIndex, partIndex)));
        }
        break;
    }
    if (content.length > 0)
      turns.push({ role: message.role === "assistant" ? "assistant" : "user", content });
  }
  return mergeConsecutiveTurns(turns);
}

/** A part's location for errors, built only when a part needs one (most are text). */
function locate(messageIndex: number, partIndex: number): string {
  return `messages[${messageIndex}].content[${partIndex}]`;
}

function convertAssistantPart(
  content: AnthropicContentBlock[],
  part: AssistantContentPart,
  upstreamModel: string,
): void {
  switch (part.type) {
    case "text":
      pushText(content, part);
      return;
    case "reasoning": {
      const state = part.providerState;
      if (!isStateForUpstream(state, PROVIDER_KIND, upstreamModel)) return;
      if (state.redactedData !== undefined)
        content.push({ type: "redacted_thinking", data: state.redactedData });
      else if (state.signature !== undefined) {
        content.push({ type: "thinking", thinking: part.text, signature: state.signature });
      }
      return;
    }
    case "native-tool": {
      // A tool Anthropic ran itself: its own block goes back as it came (encrypted results
      // included), to this provider and model only.
      const block = isStateForUpstream(part.providerState, PROVIDER_KIND, upstreamModel)
        ? readNativeBlock(part.providerState.nativeBlock)
        : undefined;
      if (block !== undefined) content.push(block);
      return;
    }
    case "tool-call":
      content.push({
        type: "tool_use",
        id: part.id,
        name: part.name,
        input: parseToolInput(part.arguments),
        ...withCacheControl(part.cacheControl),
      });
      return;
  }
}

function convertToolResult(part: ToolResultPart, param: string): AnthropicToolResultBlock {
  const converted = part.content.map(
    (item, i): Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> =>
      item.type === "text" ? convertText(item) : [convertImage(item, `${param}.content[${i}]`)],
  );
  const content = placeVerbatimBlocks(converted, part.extraBlocks ?? []);
  return {
    type: "tool_result",
    tool_use_id: part.toolCallId,
    // An empty result is sent without content: an empty text block would be rejected.
    ...(content.length > 0 ? { content } : {}),
    ...(part.isError === undefined ? {} : { is_error: part.isError }),
    ...withCacheControl(part.cacheControl),
  };
}

/**
 * A turn's or result's blocks in the order the caller sent them: the converted ones (one list per
 * canonical part), and in their places the blocks a Messages caller sent that the canonical form
 * does not carry (`tool_reference`, `search_result`), verbatim; those of another wire family are
 * left out (the drop report names them).
 */
function placeVerbatimBlocks<Block>(
  converted: ReadonlyArray<Block[]>,
  extras: readonly VerbatimBlock[],
): Array<Block | AnthropicVerbatimBlock> {
  if (extras.length === 0) return converted.flat();
  const byIndex = new Map(extras.map((extra) => [extra.index, extra]));
  const content: Array<Block | AnthropicVerbatimBlock> = [];
  let next = 0;
  for (let index = 0; index < converted.length + extras.length; index++) {
    const extra = byIndex.get(index);
    if (extra === undefined) content.push(...(converted[next++] ?? []));
    else if (extra.family === "anthropic_messages") content.push(extra.block);
  }
  return content;
}

function convertText(part: TextPart): AnthropicTextBlock[] {
  if (part.text.trim() === "") return [];
  return [{ type: "text", text: part.text, ...withCacheControl(part.cacheControl) }];
}

function pushText(content: AnthropicContentBlock[], part: TextPart): void {
  if (part.text.trim() !== "")
    content.push({ type: "text", text: part.text, ...withCacheControl(part.cacheControl) });
}

function readNativeBlock(text: string | undefined): AnthropicNativeToolBlock | undefined {
  if (text === undefined) return undefined;
  try {
    const block: unknown = JSON.parse(text);
    if (
      typeof block === "object" &&
      block !== null &&
      typeof (block as { type?: unknown }).type === "string"
    ) {
      return block as AnthropicNativeToolBlock;
    }
  } catch {
    // Not JSON: nothing Anthropic could take back.
  }
  return undefined;
}

/** The arguments as an object; anything that is not a JSON object becomes `{}` (see above). */
export function parseToolInput(argumentsText: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsText);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Invalid JSON from a client's history: fall through to the empty object.
  }
  return {};
}

/** Linear in the number of blocks: a run of one role's turns appends to one array. */
function mergeConsecutiveTurns(turns: AnthropicMessage[]): AnthropicMessage[] {
  const merged: AnthropicMessage[] = [];
  for (const turn of turns) {
    const previous = merged.at(-1);
    if (previous !== undefined && previous.role === turn.role) {
      for (const block of turn.content) previous.content.push(block);
    } else {
      merged.push({ role: turn.role, content: [...turn.content] });
    }
  }
  for (const turn of merged) {
    if (turn.role === "user") turn.content = toolResultsFirst(turn.content);
  }
  return merged;
}

function toolResultsFirst(content: AnthropicContentBlock[]): AnthropicContentBlock[] {
  const results = content.filter((block) => block.type === "tool_result");
  if (results.length === 0) return content;
  return [...results, ...content.filter((block) => block.type !== "tool_result")];
}
