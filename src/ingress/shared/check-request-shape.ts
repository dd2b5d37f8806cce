/**
 * Counts a parsed body's messages, content blocks and tools before it is validated, and refuses
 * one with more than the configured caps with `invalid_request` naming the field. Validating and
 * converting take time in proportion to these counts, so the caps bound one request's work
 * (docs/limits.md, "Bounded work"; the measurements behind them are in
 * docs/decisions/0028-bounded-work-per-request.md).
 * Cheap: a loop over the messages, nothing else is looked at.
 */

import type { IngressFormatName } from "../../canonical/ingress-format-name.js";
import { GatewayError } from "../../errors/gateway-error.js";

/** The config's `limits.max_messages`, `max_content_parts`, `max_tools`. */
export interface RequestShapeLimits {
  /** Messages (Responses: `input` items). */
  maxMessages: number;
  /** Content blocks of all messages together, blocks nested in tool results included. */
  maxContentParts: number;
  /** Tool definitions (function and server tools). */
  maxTools: number;
}

const MESSAGES_FIELD: Record<IngressFormatName, string> = {
  chat_completions: "messages",
  responses: "input",
  anthropic_messages: "messages",
};

export function checkRequestShape(
  body: unknown,
  format: IngressFormatName,
  limits: RequestShapeLimits,
): void {
  if (!isRecord(body)) return;
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > limits.maxTools) {
    throw GatewayError.invalidRequest(
      `tools has ${tools.length} definitions; at most ${limits.maxTools} are accepted`,
      "tools",
    );
  }
  const field = MESSAGES_FIELD[format];
  const messages = body[field];
  if (!Array.isArray(messages)) return;
  if (messages.length > limits.maxMessages) {
    throw GatewayError.invalidRequest(
      `${field} has ${messages.length} items; at most ${limits.maxMessages} are accepted`,
      field,
    );
  }
  // The Messages format's system prompt may be a list of blocks too.
  let parts = Array.isArray(body.system) ? body.system.length : 0;
  for (let index = 0; index < messages.length; index++) {
    parts += countParts(messages[index]);
    if (parts > limits.maxContentParts) {
      throw GatewayError.invalidRequest(
        `${field} has more than ${limits.maxContentParts} content blocks in all (counted up to ${field}[${index}]); ` +
          "send fewer or merge them",
        `${field}[${index}].content`,
      );
    }
  }
}

/** A message's content blocks, and the blocks inside its tool results (`content` / `output` lists). */
function countParts(message: unknown): number {
  if (!isRecord(message)) return 0;
  return countList(message.content) + countList(message.output);
}

function countList(list: unknown): number {
  if (!Array.isArray(list)) return 0;
  let parts = list.length;
  for (const block of list) {
    if (isRecord(block) && Array.isArray(block.content)) parts += block.content.length;
  }
  return parts;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
