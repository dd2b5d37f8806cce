/**
 * `messages` → canonical `system` + `messages`.
 *
 * - `system` and `developer` messages become the canonical system prompt, in order. One in the
 *   middle of the conversation is hoisted too: every upstream format but OpenAI's takes the system
 *   prompt apart from the turns, so its position cannot be kept.
 * - Assistant text that is empty or whitespace only is dropped (Anthropic rejects blank text blocks,
 *   and SDKs send `content: ""` next to tool calls). Reasoning comes first, then text, then tool
 *   calls: the chat format does not record their interleaving.
 * - Each `tool` message becomes its own canonical `tool` message with one tool result.
 * - What a replayed answer carries beyond that (`refusal`, `annotations`, `images`) is accepted and
 *   dropped: no upstream reads citations or generated images back in an assistant turn, so the
 *   canonical message has no place for them.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  OpaqueReasoningState,
  TextPart,
} from "../../canonical/index.js";
import { decodeTextPart, decodeToolResultContent, decodeUserContent } from "./decode-content-parts.js";
import { decodeReasoningDetails } from "./reasoning-details.js";
import type { ChatMessageBody } from "./request-schema.js";

type AssistantMessageBody = Extract<ChatMessageBody, { role: "assistant" }>;
type TextContentBody = string | Array<Parameters<typeof decodeTextPart>[0]> | null | undefined;

export interface DecodedConversation {
  system: TextPart[];
  messages: CanonicalMessage[];
}

export function decodeChatMessages(bodies: readonly ChatMessageBody[]): DecodedConversation {
  const system: TextPart[] = [];
  const messages: CanonicalMessage[] = [];
  bodies.forEach((body, index) => {
    const contentParam = `messages[${index}].content`;
    switch (body.role) {
      case "system":
      case "developer":
        for (const part of decodeTextContent(body.content)) if (part.text !== "") system.push(part);
        break;
      case "user":
        messages.push(
          withName({ role: "user", content: decodeUserContent(body.content, contentParam) }, body.name),
        );
        break;
      case "assistant":
        messages.push(withName({ role: "assistant", content: decodeAssistantContent(body) }, body.name));
        break;
      case "tool":
        messages.push({
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: body.tool_call_id,
              content: decodeToolResultContent(body.content, contentParam),
            },
          ],
        });
        break;
    }
  });
  return { system, messages };
}

function decodeAssistantContent(body: AssistantMessageBody): AssistantContentPart[] {
  const content: AssistantContentPart[] = [];
  const details = decodeReasoningDetails(body.reasoning_details ?? []);
  // reasoning_details, when the gateway produced them, repeat the `reasoning` text with its state.
  if (details.reasoning.length > 0) for (const part of details.reasoning) content.push(part);
  else if (body.reasoning) content.push({ type: "reasoning", text: body.reasoning });
  for (const part of decodeTextContent(body.content)) {
    if (part.text.trim() !== "") content.push(part);
  }
  for (const call of body.tool_calls ?? []) {
    const state: OpaqueReasoningState | undefined = details.toolCallStates.get(call.id);
    content.push({
      type: "tool-call",
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      ...(state === undefined ? {} : { providerState: state }),
    });
  }
  return content;
}

function decodeTextContent(content: TextContentBody): TextPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map(decodeTextPart);
}

function withName<T extends CanonicalMessage & { role: "user" | "assistant" }>(
  message: T,
  name: string | null | undefined,
): T {
  if (typeof name === "string") message.name = name;
  return message;
}
