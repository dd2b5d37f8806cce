/**
 * `system` + `messages` → canonical `system` + `messages`.
 *
 * - The top-level `system` comes first, then every `system` turn in order: other upstream formats
 *   take the system prompt apart from the turns, so a turn's position cannot be kept.
 * - A user turn's `tool_result` blocks become one canonical `tool` message at the turn's place (one
 *   message, so a parallel round stays one round for upstreams that group results); the turn's other
 *   blocks follow as a user message. Anthropic requires results first in such a turn anyway.
 * - A turn left with no content (only blank text) is dropped rather than sent empty, which every
 *   upstream would reject; a conversation left with no turn at all is refused. A turn whose only
 *   blocks are of types the gateway does not know is kept for Anthropic routes (`extraBlocks`);
 *   other adapters leave it out.
 */
import type { CanonicalMessage, TextPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { decodeAssistantBlocks, decodeTextContent, decodeUserBlocks } from "./decode-content-blocks.js";
import type { MessagesMessageBody, MessagesRequestBody } from "./request-schema.js";

export interface DecodedConversation {
  system: TextPart[];
  messages: CanonicalMessage[];
}

export function decodeMessagesConversation(
  system: MessagesRequestBody["system"],
  bodies: readonly MessagesMessageBody[],
): DecodedConversation {
  const decoded: DecodedConversation = {
    system: system === null || system === undefined ? [] : decodeTextContent(system),
    messages: [],
  };
  bodies.forEach((body, index) => {
    decodeMessage(body, `messages[${index}].content`, decoded);
  });
  if (decoded.messages.length === 0) {
    throw GatewayError.invalidRequest(
      "messages must contain at least one user or assistant message with content",
      "messages",
    );
  }
  return decoded;
}

function decodeMessage(body: MessagesMessageBody, param: string, into: DecodedConversation): void {
  switch (body.role) {
    case "system":
      for (const part of decodeTextContent(body.content)) into.system.push(part);
      return;
    case "assistant": {
      if (typeof body.content === "string") {
        const content = decodeTextContent(body.content);
        if (content.length > 0) into.messages.push({ role: "assistant", content });
        return;
      }
      const { content, extraBlocks } = decodeAssistantBlocks(body.content, param);
      if (extraBlocks.length > 0) into.messages.push({ role: "assistant", content, extraBlocks });
      else if (content.length > 0) into.messages.push({ role: "assistant", content });
      return;
    }
    case "user": {
      if (typeof body.content === "string") {
        const content = decodeTextContent(body.content);
        if (content.length > 0) into.messages.push({ role: "user", content });
        return;
      }
      const { toolResults, content, extraBlocks } = decodeUserBlocks(body.content, param);
      if (toolResults.length > 0) into.messages.push({ role: "tool", content: toolResults });
      if (extraBlocks.length > 0) into.messages.push({ role: "user", content, extraBlocks });
      else if (content.length > 0) into.messages.push({ role: "user", content });
      return;
    }
  }
}
