/**
 * Upper bounds of a provider's token count for text, from the o200k count and the text's
 * characters, for providers whose tokenizer cannot run here (docs/metering.md, "Reservation
 * estimates"). A bound is `ceil((o200kWeight · o200k + Σ scriptWeight · characters) / 20)`, never
 * more than the text's UTF-8 bytes (a byte-level BPE, and SentencePiece with byte fallback, never
 * emits more tokens than that). Characters of a script without a measured weight add their UTF-8
 * length. Weights are twentieths, so the sum stays an integer.
 *
 * The weights were fitted so that the bound is at or above every reference count of the corpus in
 * test/fixtures/token-corpus (prose in twelve languages, code, configuration), then rounded up;
 * the measured margins are in docs/metering.md. They hold for ordinary text, not for any text: the
 * provider's own tokenizer is not available, so no weight is a proof.
 */

/** The scripts a weight can be given to, by code point. */
export type TextScript = "latin" | "cyrillic" | "indic" | "cjk" | "hangul";

export interface TextTokenBound {
  /** Twentieths of a token per o200k token. */
  o200kWeight: number;
  /** Twentieths of a token per character of each script, on top of the o200k part. */
  scriptWeights: Record<TextScript, number>;
}

/**
 * Anthropic's Claude models. Reference: the public Claude tokenizer's count × 1.35, since Anthropic
 * states that its tokenizer of Claude 4.7 and later models counts about 30 % more tokens than the
 * earlier one for the same text.
 */
export const ANTHROPIC_TEXT_BOUND: TextTokenBound = {
  o200kWeight: 34,
  scriptWeights: { latin: 32, cyrillic: 7, indic: 24, cjk: 2, hangul: 12 },
};

/** Google's Gemini models. Reference: the Gemma 3 tokenizer's count (Gemini's vocabulary). */
export const GOOGLE_TEXT_BOUND: TextTokenBound = {
  o200kWeight: 25,
  scriptWeights: { latin: 0, cyrillic: 0, indic: 0, cjk: 0, hangul: 0 },
};

const WEIGHT_UNIT = 20;

/**
 * The bound for `text` whose o200k count is bounded by `o200kTokens` (an upper bound is enough:
 * scaling it keeps it one). One pass over the text.
 */
export function boundTextTokens(text: string, o200kTokens: number, bound: TextTokenBound): number {
  let weighted = o200kTokens * bound.o200kWeight;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes += 1;
      continue;
    }
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      // A surrogate pair: a supplementary character, four UTF-8 bytes, no measured script.
      index++;
      bytes += 4;
      weighted += 4 * WEIGHT_UNIT;
      continue;
    }
    const length = code < 0x800 ? 2 : 3;
    bytes += length;
    const script = classifyScript(code);
    weighted += script === undefined ? length * WEIGHT_UNIT : bound.scriptWeights[script];
  }
  return Math.min(bytes, Math.ceil(weighted / WEIGHT_UNIT));
}

function classifyScript(code: number): TextScript | undefined {
  if (code < 0x370) return "latin";
  if (code >= 0x400 && code < 0x530) return "cyrillic";
  if (code >= 0x900 && code < 0xe00) return "indic";
  if (code >= 0xac00 && code < 0xd7b0) return "hangul";
  if (
    (code >= 0x3000 && code < 0xa000) ||
    (code >= 0xf900 && code < 0xfb00) ||
    (code >= 0xff00 && code < 0xfff0)
  ) {
    return "cjk";
  }
  return undefined;
}
