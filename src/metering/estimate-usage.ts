/**
 * Token estimates for the one case where the upstream never reported usage: the client went away
 * (or the stream broke) before the final usage event. o200k is exact for current OpenAI models and
 * a close estimate for others; a fallback of chars/4 covers tokenizer failures (and texts that
 * spell a special token such as `<|endoftext|>`, which the counter refuses as gpt-tokenizer does).
 */
import type { CanonicalRequest, CanonicalUsage } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import { countO200kTokens } from "./count-o200k-tokens.js";

export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  try {
    return countO200kTokens(text);
  } catch {
    return Math.ceil(text.length / 4);
  }
}

/**
 * Counts already seen, per text. Conversations resend their whole history and system prompt with
 * every turn, and agents their tool definitions, so most of a prompt's texts were counted before;
 * tokenizing is the costliest step of admission (~40 µs for a short chat prompt). Bounded by the
 * characters it keeps alive; oldest entries go first.
 */
const MIN_CACHED_LENGTH = 64;
const MAX_CACHED_CHARACTERS = 4_000_000;
const cachedCounts = new Map<string, number>();
let cachedCharacters = 0;

function countCached(text: string): number {
  if (text.length < MIN_CACHED_LENGTH) return estimateTextTokens(text);
  const known = cachedCounts.get(text);
  if (known !== undefined) return known;
  const count = estimateTextTokens(text);
  if (text.length > MAX_CACHED_CHARACTERS / 4) return count;
  cachedCounts.set(text, count);
  cachedCharacters += text.length;
  for (const [oldest] of cachedCounts) {
    if (cachedCharacters <= MAX_CACHED_CHARACTERS) break;
    cachedCounts.delete(oldest);
    cachedCharacters -= oldest.length;
  }
  return count;
}

/**
 * Prompt estimate: every text the request sends, plus the tool definitions, each text counted on
 * its own (a separator between texts ends a token anyway) so repeated texts hit the cache.
 */
export function estimateInputTokens(request: CanonicalRequest): number {
  let tokens = 0;
  let texts = 0;
  const add = (text: string) => {
    tokens += countCached(text);
    texts++;
  };
  for (const part of request.system) add(part.text);
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") add(part.text);
      else if (part.type === "tool-call") add(`${part.name}${part.arguments}`);
      else if (part.type === "tool-result") {
        for (const inner of part.content) if (inner.type === "text") add(inner.text);
      }
    }
  }
  if (request.tools.length > 0) add(JSON.stringify(request.tools));
  // One token per separator, ~4 tokens of framing per message, as in OpenAI's chat token accounting.
  return tokens + texts + 4 * (request.messages.length + 1);
}

export function estimateUsage(request: CanonicalRequest, deliveredOutput: string): CanonicalUsage {
  return {
    ...createEmptyUsage(),
    inputTokens: estimateInputTokens(request),
    outputTokens: estimateTextTokens(deliveredOutput),
  };
}
