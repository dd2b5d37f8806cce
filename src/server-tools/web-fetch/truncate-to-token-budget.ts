/**
 * Caps page text at a token budget without running a tokenizer over a page that may be megabytes
 * long: the budget is converted to UTF-8 bytes at {@link CONTENT_BYTES_PER_TOKEN} bytes per token and
 * the text is cut at the last paragraph, line or word break before it, in one pass over at most
 * the kept prefix (a page of any length costs the same). Three bytes per token is an estimate: on o200k, prose and code in most scripts run 3.6 to
 * 8 bytes per token (so they stay under the budget), number-dense JSON about 2.5, encoded data
 * about 1.5 (up to twice over it). A hard ceiling, when one is needed, is the byte count itself:
 * a byte-level BPE token never covers less than one byte.
 */

export const CONTENT_BYTES_PER_TOKEN = 3;

export interface TruncatedText {
  text: string;
  truncated: boolean;
}

/** The UTF-8 size the text of a `maxTokens` budget may have. */
export function contentByteBudget(maxTokens: number): number {
  return maxTokens * CONTENT_BYTES_PER_TOKEN;
}

export function truncateToTokenBudget(text: string, maxTokens: number): TruncatedText {
  const budget = contentByteBudget(maxTokens);
  // Each UTF-16 unit is at most 3 UTF-8 bytes: a string this short always fits without measuring.
  if (text.length * 3 <= budget) return { text, truncated: false };
  const within = prefixLengthWithin(text, budget);
  if (within === text.length) return { text, truncated: false };
  const cut = preferBreak(text, within);
  const note =
    `\n\n[Truncated: the content is longer than web_fetch's limit of about ${maxTokens} tokens; ` +
    "the rest was not included.]";
  return { text: text.slice(0, cut).trimEnd() + note, truncated: true };
}

/** The number of UTF-16 units whose UTF-8 encoding fits in `budget` bytes, never splitting a pair. */
function prefixLengthWithin(text: string, budget: number): number {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const unit = text.charCodeAt(index);
    let size: number;
    let width = 1;
    if (unit < 0x80) size = 1;
    else if (unit < 0x800) size = 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        size = 4;
        width = 2;
      } else size = 3;
    } else size = 3;
    if (bytes + size > budget) break;
    bytes += size;
    index += width;
  }
  return index;
}

/** A cut at a paragraph, line or word break close before `cut`, else `cut` itself. */
function preferBreak(text: string, cut: number): number {
  for (const [separator, share] of [
    ["\n\n", 0.8],
    ["\n", 0.9],
    [" ", 0.95],
  ] as const) {
    const at = text.lastIndexOf(separator, cut - separator.length);
    if (at >= cut * share) return at;
  }
  return cut;
}
