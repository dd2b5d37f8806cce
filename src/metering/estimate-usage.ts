/**
 * Token estimates for the one case where the upstream never reported usage: the client went away
 * (or the stream broke) before the final usage event. o200k is exact for current OpenAI models and
 * a close estimate for others; a fallback of chars/4 covers tokenizer failures.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { CanonicalRequest, CanonicalUsage } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";

export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  try {
    return countTokens(text);
  } catch {
    return Math.ceil(text.length / 4);
  }
}

/** Prompt estimate: every text the request sends, plus the tool definitions. */
export function estimateInputTokens(request: CanonicalRequest): number {
  let text = "";
  for (const part of request.system) text += `${part.text}\n`;
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") text += `${part.text}\n`;
      else if (part.type === "tool-call") text += `${part.name}${part.arguments}\n`;
      else if (part.type === "tool-result") {
        for (const inner of part.content) if (inner.type === "text") text += `${inner.text}\n`;
      }
    }
  }
  if (request.tools.length > 0) text += JSON.stringify(request.tools);
  // ~4 tokens of framing per message, as in OpenAI's chat token accounting.
  return estimateTextTokens(text) + 4 * (request.messages.length + 1);
}

export function estimateUsage(request: CanonicalRequest, deliveredOutput: string): CanonicalUsage {
  return {
    ...createEmptyUsage(),
    inputTokens: estimateInputTokens(request),
    outputTokens: estimateTextTokens(deliveredOutput),
  };
}
