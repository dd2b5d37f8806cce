/**
 * Counts o200k tokens exactly as gpt-tokenizer's `countTokens` from
 * `gpt-tokenizer/encoding/o200k_base` does by default (the tests compare the two on thousands of
 * texts), without keeping its tens of MB of rank strings and Maps alive: the ranks live in typed
 * arrays (`o200k-rank-table.ts`), built on the first count.
 *
 * The algorithm is tiktoken's: split the text with o200k's pre-tokenizer pattern; a piece that is
 * itself a token counts one; any other piece is UTF-8 encoded and its adjacent parts merged,
 * lowest-ranked pair first, until no pair is a token; it counts as many tokens as parts remain.
 *
 * Merging is quadratic in a piece's length (megabytes of one letter are a single piece), so
 * request handling uses {@link countO200kTokensBounded}: pieces longer than
 * {@link MAX_MERGED_PIECE_BYTES} count as their UTF-8 byte length, which bounds their count from
 * above (merging starts from one token per byte and only ever lowers the count), and counting
 * stops at a work budget so the caller decides what the rest is worth. {@link countO200kTokens},
 * the exact count, is for tests and short texts.
 */
import { loadO200kRankTable, type RankTable } from "./o200k-rank-table.js";

// gpt-tokenizer 4.0.0's O200K_TOKEN_SPLIT_REGEX (src/encodingParams/constants.ts), spelled out.
const CONTRACTION = `(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const O200K_PIECE_PATTERN = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  // Sticky instead of gpt-tokenizer's global flag: the same pieces (see countO200kTokens), faster.
  "uy",
);

/**
 * By default `countTokens` refuses text that contains a special token's spelling (it throws
 * rather than count it as text or as the special token); so does this counter, with the same
 * message, and callers keep their fallback for it.
 */
const SPECIAL_TOKEN_PATTERN =
  /(<\|endoftext\|>|<\|fim_prefix\|>|<\|fim_middle\|>|<\|fim_suffix\|>|<\|im_start\|>|<\|im_end\|>|<\|im_sep\|>|<\|endofprompt\|>)/;

const NO_RANK = 0x7fffffff;
// Scratch buffers above this size are not kept between calls (one huge word should not pin MBs).
const MAX_KEPT_SCRATCH = 1 << 16;

let rankTable: RankTable | Error | undefined;
let pieceBytes = new Uint8Array(1024);
let partStarts = new Int32Array(1024);
let partRanks = new Int32Array(1024);

/**
 * Pieces longer than this many UTF-8 bytes are not merged by the bounded counter: they count as
 * their byte length. Ordinary words, numbers and runs of punctuation or white space are far
 * shorter; long pieces are runs of letters without a break (a sequence, a hash, minified code,
 * one letter repeated), whole sentences of CJK text among them, so the cut is well above a long
 * CJK sentence, and merging one such piece is still cheap.
 */
export const MAX_MERGED_PIECE_BYTES = 512;

/** The exact count, as gpt-tokenizer's `countTokens`. Quadratic in the longest piece: short texts only. */
export function countO200kTokens(text: string): number {
  if (text.includes("<|")) {
    const special = SPECIAL_TOKEN_PATTERN.exec(text);
    if (special !== null) throw new Error(`Disallowed special token found: ${special[0]}`);
  }
  return countPieces(text, 0, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY).tokens;
}

export interface PartialCount {
  /** Tokens of `text[start, end)`. */
  tokens: number;
  /** Where counting stopped: the text's length, or the end of the last piece within the budget. */
  end: number;
  /** UTF-8 bytes of `text[start, end)`. */
  bytes: number;
  /** Work spent (see {@link countO200kTokensBounded}). */
  work: number;
}

/**
 * Counts `text` from `start` (which must be where a piece begins: 0, or a previous call's `end`),
 * linearly: the o200k count, except that a piece longer than {@link MAX_MERGED_PIECE_BYTES}
 * counts as its UTF-8 byte length. So the result is never below the exact count, and equals it
 * for text without such pieces. A special token's spelling (`<|endoftext|>`) counts as the text
 * it is, which is how OpenAI's API bills it.
 *
 * Stops after the piece that spends the last of `workBudget`. Work is one unit per byte of a
 * piece plus the merging, which grows with the square of a piece's length: so a budget bounds
 * the time however the text is made.
 */
export function countO200kTokensBounded(text: string, start: number, workBudget: number): PartialCount {
  return countPieces(text, start, workBudget, MAX_MERGED_PIECE_BYTES);
}

function countPieces(text: string, start: number, workBudget: number, maxMergedBytes: number): PartialCount {
  const table = getRankTable();
  const pattern = O200K_PIECE_PATTERN;
  pattern.lastIndex = start;
  let tokens = 0;
  let bytes = 0;
  let work = 0;
  // Every code point is a letter, a number, white space or none of these, and each has an
  // alternative that matches it, so each match starts where the previous one ended: a sticky
  // `test` finds the next piece's end without building a match array or a substring.
  let pieceStart = start;
  while (work < workBudget && pattern.test(text)) {
    const pieceEnd = pattern.lastIndex;
    // Measured apart only when the piece may be long (a UTF-16 unit is at most 3 UTF-8 bytes);
    // Buffer.byteLength counts a lone surrogate as U+FFFD's 3 bytes, as encodePiece does.
    const longBytes =
      (pieceEnd - pieceStart) * 3 > maxMergedBytes
        ? Buffer.byteLength(text.slice(pieceStart, pieceEnd), "utf8")
        : 0;
    if (longBytes > maxMergedBytes) {
      tokens += longBytes;
      bytes += longBytes;
      work += longBytes;
    } else {
      tokens += countPieceTokens(table, text, pieceStart, pieceEnd);
      const pieceBytes = encodedLength;
      bytes += pieceBytes;
      work += pieceBytes + ((pieceBytes * pieceBytes) >> 6);
    }
    pieceStart = pieceEnd;
  }
  if (work < workBudget && pieceStart !== text.length)
    throw new Error(`o200k pre-tokenizer stopped at ${pieceStart} of ${text.length}`);
  return { tokens, end: pieceStart, bytes, work };
}

/**
 * Builds the rank table (~4 MB) now rather than in the first request that counts. A
 * failure is kept: counting then throws at once and callers fall back to byte counts.
 */
export function loadO200kCounter(): void {
  try {
    getRankTable();
  } catch {
    // Reported by the first count, which falls back.
  }
}

/** The rank table, built on first use; a failure is kept so callers' fallback stays cheap. */
function getRankTable(): RankTable {
  if (rankTable === undefined) {
    try {
      rankTable = loadO200kRankTable();
    } catch (error) {
      rankTable = error instanceof Error ? error : new Error(String(error));
    }
  }
  if (rankTable instanceof Error) throw rankTable;
  return rankTable;
}

function countPieceTokens(table: RankTable, text: string, start: number, end: number): number {
  const bytes = encodePiece(text, start, end);
  const length = encodedLength;
  // Every single byte is a token.
  if (length === 1) return 1;
  // gpt-tokenizer looks the piece up as a string first, and a string with a lone surrogate is no
  // token's string; only its UTF-8 form (with U+FFFD in the surrogate's place) is merged.
  if (encodedWellFormed && table.rankOf(bytes, 0, length) >= 0) return 1;
  return countMergedParts(table, bytes, length);
}

let encodedLength = 0;
let encodedWellFormed = true;

/** UTF-8 of `text[start, end)` into the scratch buffer, lone surrogates as U+FFFD (as TextEncoder does). */
function encodePiece(text: string, start: number, end: number): Uint8Array {
  const needed = (end - start) * 3;
  let bytes = pieceBytes;
  if (needed > bytes.length) {
    bytes = new Uint8Array(needed);
    if (needed <= MAX_KEPT_SCRATCH) pieceBytes = bytes;
  }
  let length = 0;
  let wellFormed = true;
  for (let index = start; index < end; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes[length++] = code;
    } else if (code < 0x800) {
      bytes[length++] = 0xc0 | (code >> 6);
      bytes[length++] = 0x80 | (code & 0x3f);
    } else if (code < 0xd800 || code > 0xdfff) {
      bytes[length++] = 0xe0 | (code >> 12);
      bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[length++] = 0x80 | (code & 0x3f);
    } else {
      const next = index + 1 < end ? text.charCodeAt(index + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        index++;
        bytes[length++] = 0xf0 | (code >> 18);
        bytes[length++] = 0x80 | ((code >> 12) & 0x3f);
        bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
        bytes[length++] = 0x80 | (code & 0x3f);
      } else {
        wellFormed = false;
        bytes[length++] = 0xef;
        bytes[length++] = 0xbf;
        bytes[length++] = 0xbd;
      }
    }
  }
  encodedLength = length;
  encodedWellFormed = wellFormed;
  return bytes;
}

/**
 * The rank gpt-tokenizer finds for `bytes[start, end)` while merging. It decodes a key that is
 * valid UTF-8 with a TextDecoder, which drops a leading byte order mark, and looks the rest up:
 * so EF BB BF followed by "using" ranks as "using", and the BOM alone as nothing. (tiktoken itself
 * would find the BOM tokens; matching gpt-tokenizer is the point here.)
 */
function mergeRank(table: RankTable, bytes: Uint8Array, start: number, end: number, length: number): number {
  if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) {
    // The piece is valid UTF-8 and the key starts on a character, so the key is valid exactly
    // when it also ends on one (at the piece's end or before a lead byte).
    if (end === length || (bytes[end] & 0xc0) !== 0x80) {
      const rank = end - start > 3 ? table.rankOf(bytes, start + 3, end) : -1;
      return rank < 0 ? NO_RANK : rank;
    }
  }
  const rank = table.rankOf(bytes, start, end);
  return rank < 0 ? NO_RANK : rank;
}

/** tiktoken's `byte_pair_merge`, returning how many parts are left. */
function countMergedParts(table: RankTable, bytes: Uint8Array, length: number): number {
  let starts = partStarts;
  let ranks = partRanks;
  if (length + 1 > starts.length) {
    starts = new Int32Array(length + 1);
    ranks = new Int32Array(length + 1);
    if (length + 1 <= MAX_KEPT_SCRATCH) {
      partStarts = starts;
      partRanks = ranks;
    }
  }
  // ranks[i] is the rank of parts i and i + 1 merged; parts are bytes[starts[i], starts[i + 1]).
  for (let index = 0; index <= length; index++) {
    starts[index] = index;
    ranks[index] = index + 2 <= length ? mergeRank(table, bytes, index, index + 2, length) : NO_RANK;
  }
  let parts = length;
  while (parts > 1) {
    let lowest = NO_RANK;
    let at = -1;
    for (let index = 0; index < parts - 1; index++) {
      if (ranks[index] < lowest) {
        lowest = ranks[index];
        at = index;
      }
    }
    if (at < 0) break;
    // Parts at and at + 1 become one: drop start at + 1 and the merged pair's rank.
    starts.copyWithin(at + 1, at + 2, parts + 1);
    ranks.copyWithin(at, at + 1, parts + 1);
    parts--;
    ranks[at] = at + 2 <= parts ? mergeRank(table, bytes, starts[at], starts[at + 2], length) : NO_RANK;
    if (at > 0) ranks[at - 1] = mergeRank(table, bytes, starts[at - 1], starts[at + 1], length);
  }
  return parts;
}
