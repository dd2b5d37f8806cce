/**
 * Token counts of a request's texts, linear in their size and bounded in time: the o200k count
 * (exact for current OpenAI models, close for others), with two limits that keep one request
 * from holding the event loop (docs/metering.md):
 *
 * - a piece of text longer than 512 bytes with no break (one letter repeated, a DNA sequence, a
 *   hash) counts as its UTF-8 byte length instead of being merged (`count-o200k-tokens.ts`);
 * - one request's counting stops after a work budget (~250 KB of ordinary text),
 *   and a text longer than {@link MAX_TOKENIZED_CHARACTERS} is not split into pieces at all (the
 *   pre-tokenizer would have to scan a run without a break to its end: megabytes of one word).
 *   What is left over counts as its UTF-8 bytes where an upper bound is needed (reservations),
 *   or at the tokens-per-byte rate of what was counted where an estimate is (usage the upstream
 *   never reported, `count_tokens`; a long text's first {@link MAX_TOKENIZED_CHARACTERS}
 *   characters are counted for the rate).
 *
 * Estimates here are for the one case where the upstream never reported usage (the client went
 * away, or the stream broke, before the final usage event) and for `count_tokens`.
 */
import type { CanonicalRequest, CanonicalUsage } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import { countO200kTokensBounded, type PartialCount } from "./count-o200k-tokens.js";

/** Work units (count-o200k-tokens.ts) one request may spend counting: ~250 KB of ordinary text. */
export const TOKEN_COUNT_WORK_BUDGET = 256_000;
/** Longest text given to the tokenizer; a longer one is bounded by its bytes, or sampled. */
export const MAX_TOKENIZED_CHARACTERS = 256 * 1024;
/** Tokens per byte assumed for uncounted text before anything was counted (~4 bytes a token). */
const DEFAULT_TOKENS_PER_BYTE = 0.25;

/**
 * Counts already seen, per text. Conversations resend their whole history and system prompt with
 * every turn, and agents their tool definitions, so most of a prompt's texts were counted before;
 * tokenizing is the costliest step of admission. Bounded by the
 * characters it keeps alive; oldest entries go first. Only complete counts are kept: they are
 * both the estimate and an upper bound of the o200k count.
 */
const MIN_CACHED_LENGTH = 64;
const MAX_CACHED_CHARACTERS = 4_000_000;
const cachedCounts = new Map<string, number>();
let cachedCharacters = 0;

function remember(text: string, count: number): void {
  if (text.length < MIN_CACHED_LENGTH || text.length > MAX_CACHED_CHARACTERS / 4) return;
  cachedCounts.set(text, count);
  cachedCharacters += text.length;
  for (const [oldest] of cachedCounts) {
    if (cachedCharacters <= MAX_CACHED_CHARACTERS) break;
    cachedCounts.delete(oldest);
    cachedCharacters -= oldest.length;
  }
}

/** Counts the texts of one request (or one answer) against one work budget. */
export class TokenCounter {
  private remaining: number;
  private countedTokens = 0;
  private countedBytes = 0;

  constructor(workBudget = TOKEN_COUNT_WORK_BUDGET) {
    this.remaining = workBudget;
  }

  /** Never below the text's o200k count: text past the budget counts one token per byte. */
  bound(text: string): number {
    return this.count(text, true);
  }

  /** The o200k count where the budget reaches, the rest at the rate counted so far. */
  estimate(text: string): number {
    return this.count(text, false);
  }

  private count(text: string, upperBound: boolean): number {
    if (text.length === 0) return 0;
    if (text.length >= MIN_CACHED_LENGTH) {
      const known = cachedCounts.get(text);
      if (known !== undefined) return known;
    }
    // Too long to tokenize: its bytes bound it; an estimate counts its start and scales it.
    const long = text.length > MAX_TOKENIZED_CHARACTERS;
    if (long && upperBound) return Buffer.byteLength(text, "utf8");
    const counted = long ? text.slice(0, MAX_TOKENIZED_CHARACTERS) : text;
    let tokens = 0;
    let end = 0;
    const partial = this.remaining > 0 ? countOrFail(counted, this.remaining) : undefined;
    if (partial !== undefined) {
      this.remaining -= partial.work;
      this.countedTokens += partial.tokens;
      this.countedBytes += partial.bytes;
      if (!long && partial.end === text.length) {
        remember(text, partial.tokens);
        return partial.tokens;
      }
      tokens = partial.tokens;
      end = partial.end;
    }
    const restBytes = Buffer.byteLength(end === 0 ? text : text.slice(end), "utf8");
    if (upperBound) return tokens + restBytes;
    const rate = this.countedBytes > 0 ? this.countedTokens / this.countedBytes : DEFAULT_TOKENS_PER_BYTE;
    return tokens + Math.ceil(restBytes * rate);
  }
}

/** The bounded count, or undefined when the tokenizer cannot run (its rank file failed to load). */
function countOrFail(text: string, workBudget: number): PartialCount | undefined {
  try {
    return countO200kTokensBounded(text, 0, workBudget);
  } catch {
    return undefined;
  }
}

export function estimateTextTokens(text: string): number {
  return new TokenCounter().estimate(text);
}

/**
 * Every text a request sends, with what each is counted as: texts, tool calls (name and
 * arguments), tool results' texts, reasoning text. Tool definitions are one JSON text.
 */
export function forEachRequestText(request: CanonicalRequest, visit: (text: string) => void): void {
  for (const part of request.system) visit(part.text);
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") visit(part.text);
      else if (part.type === "tool-call") visit(`${part.name}${part.arguments}`);
      else if (part.type === "tool-result") {
        for (const inner of part.content) if (inner.type === "text") visit(inner.text);
      }
    }
  }
  if (request.tools.length > 0) visit(JSON.stringify(request.tools));
}

/** Tokens of framing: one per separator between texts, ~4 per message as OpenAI counts chat. */
export function countFramingTokens(texts: number, messages: number): number {
  return texts + 4 * (messages + 1);
}

/**
 * Prompt estimate: every text the request sends, plus the tool definitions, each text counted on
 * its own (a separator between texts ends a token anyway) so repeated texts hit the cache.
 */
export function estimateInputTokens(request: CanonicalRequest, counter = new TokenCounter()): number {
  let tokens = 0;
  let texts = 0;
  forEachRequestText(request, (text) => {
    tokens += counter.estimate(text);
    texts++;
  });
  return tokens + countFramingTokens(texts, request.messages.length);
}

export function estimateUsage(request: CanonicalRequest, deliveredOutput: string): CanonicalUsage {
  const counter = new TokenCounter();
  const usage = createEmptyUsage();
  usage.inputTokens = estimateInputTokens(request, counter);
  usage.outputTokens = counter.estimate(deliveredOutput);
  return usage;
}
