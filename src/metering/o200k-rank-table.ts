/**
 * o200k's byte-pair ranks (token bytes → rank) in ~4.2 MB of typed arrays, built from the
 * `.tiktoken` file gpt-tokenizer ships (`gpt-tokenizer/data/o200k_base.tiktoken`: one
 * "base64-bytes rank" line per token, the source its own `bpeRanks` module is generated from).
 * Importing that module instead keeps a large array literal, 200k strings and two Maps in memory
 * for as long as the process lives (docs/decisions/0014-own-o200k-token-counter.md); this file reads the text once, decodes it straight
 * into one byte buffer and keeps no JS string or object per token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export interface RankTable {
  /** Rank of `bytes[start, end)`, or -1 when those bytes are no token. */
  rankOf(bytes: Uint8Array, start: number, end: number): number;
}

const RANK_FILE = "gpt-tokenizer/data/o200k_base.tiktoken";

// Open addressing with linear probing; 2^19 slots for 200k tokens keeps probes short (load 0.38).
const SLOT_BITS = 19;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
// A slot holds rank + 1 in its low 18 bits (0 = empty) and the key hash's top 14 bits above them,
// so a probe compares bytes only when those bits agree.
const RANK_BITS = 18;
const RANK_MASK = (1 << RANK_BITS) - 1;
const TAG_MASK = ~RANK_MASK >>> 0;

const BASE64_VALUES = (() => {
  const values = new Int8Array(256).fill(-1);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let index = 0; index < alphabet.length; index++) values[alphabet.charCodeAt(index)] = index;
  return values;
})();

/** FNV-1a: cheap, and good enough on short byte strings to keep the probe chains short. */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ bytes[index], 0x01000193);
  return hash >>> 0;
}

/**
 * gpt-tokenizer stores a token as a string when its bytes decode to UTF-8 and back unchanged,
 * else as a byte array it only searches for keys that are not valid UTF-8. A token starting with
 * a byte order mark (EF BB BF) is valid UTF-8 but does not survive the round trip (TextDecoder
 * drops a leading BOM), so it is stored as bytes and never found: such tokens are left out here
 * too, and `count-o200k-tokens.ts` repeats what the lookup does with a BOM-led key.
 */
function startsWithByteOrderMark(bytes: Uint8Array, start: number, end: number): boolean {
  return end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf;
}

interface DecodedRanks {
  tokenBytes: Uint8Array;
  /** Token `rank` is `tokenBytes[tokenStarts[rank], tokenStarts[rank + 1])`. */
  tokenStarts: Uint32Array;
}

/**
 * Decodes the "base64 rank" lines in place (4 characters become at most 3 bytes, so the bytes
 * written never overtake the text still to read), then keeps an exact-size copy: the only
 * transient is the file's own buffer. Ranks must run 0, 1, 2, …, as they do in o200k.
 */
function decodeRankFile(file: Uint8Array): DecodedRanks {
  let lines = 0;
  for (let index = 0; index < file.length; index++) if (file[index] === 0x0a) lines++;
  const tokenStarts = new Uint32Array(lines + 1);
  let read = 0;
  let written = 0;
  let rank = 0;
  const fail = (why: string): never => {
    throw new Error(`${RANK_FILE}: ${why} at line ${rank + 1}`);
  };
  while (read < file.length) {
    if (rank === lines) fail("no line end");
    tokenStarts[rank] = written;
    while (file[read] !== 0x20) {
      if (read + 4 > file.length) fail("truncated base64");
      const third = file[read + 2];
      const fourth = file[read + 3];
      const a = BASE64_VALUES[file[read]];
      const b = BASE64_VALUES[file[read + 1]];
      const c = third === 0x3d ? 0 : BASE64_VALUES[third];
      const d = fourth === 0x3d ? 0 : BASE64_VALUES[fourth];
      if ((a | b | c | d) < 0) fail("invalid base64");
      const group = (a << 18) | (b << 12) | (c << 6) | d;
      file[written++] = group >> 16;
      if (third !== 0x3d) file[written++] = (group >> 8) & 0xff;
      if (fourth !== 0x3d) file[written++] = group & 0xff;
      read += 4;
    }
    if (written === tokenStarts[rank]) fail("empty token");
    read++;
    let value = 0;
    const digitsStart = read;
    for (; read < file.length && file[read] !== 0x0a; read++) {
      const digit = file[read] - 0x30;
      if (digit < 0 || digit > 9) fail("invalid rank");
      value = value * 10 + digit;
    }
    if (read === digitsStart || value !== rank) fail(`rank ${value} where ${rank} was expected`);
    read++;
    rank++;
  }
  if (rank !== lines || rank > RANK_MASK - 1) fail("unexpected token count");
  tokenStarts[rank] = written;
  // A copy (Buffer's own slice would share, and so keep, the whole file's memory).
  return { tokenBytes: new Uint8Array(file.subarray(0, written)), tokenStarts };
}

function buildRankTable({ tokenBytes, tokenStarts }: DecodedRanks): RankTable {
  const slots = new Uint32Array(1 << SLOT_BITS);
  const tokenCount = tokenStarts.length - 1;
  for (let rank = 0; rank < tokenCount; rank++) {
    const start = tokenStarts[rank];
    const end = tokenStarts[rank + 1];
    if (startsWithByteOrderMark(tokenBytes, start, end)) continue;
    const hash = hashBytes(tokenBytes, start, end);
    let slot = hash & SLOT_MASK;
    while (slots[slot] !== 0) slot = (slot + 1) & SLOT_MASK;
    slots[slot] = ((hash & TAG_MASK) | (rank + 1)) >>> 0;
  }

  return {
    rankOf(bytes, start, end) {
      const hash = hashBytes(bytes, start, end);
      const tag = hash & TAG_MASK;
      const length = end - start;
      for (let slot = hash & SLOT_MASK; ; slot = (slot + 1) & SLOT_MASK) {
        const entry = slots[slot];
        if (entry === 0) return -1;
        if ((entry & TAG_MASK) !== tag) continue;
        const rank = (entry & RANK_MASK) - 1;
        const tokenStart = tokenStarts[rank];
        if (tokenStarts[rank + 1] - tokenStart !== length) continue;
        let index = 0;
        while (index < length && tokenBytes[tokenStart + index] === bytes[start + index]) index++;
        if (index === length) return rank;
      }
    },
  };
}

/** Reads and indexes the rank file (30–80 ms); callers build it once, when first needed. */
export function loadO200kRankTable(): RankTable {
  const path = createRequire(import.meta.url).resolve(RANK_FILE);
  return buildRankTable(decodeRankFile(readFileSync(path)));
}

/** For the tests: every rank's bytes as the rank file gives them. */
export function loadO200kTokenBytes(): (rank: number) => Uint8Array {
  const path = createRequire(import.meta.url).resolve(RANK_FILE);
  const { tokenBytes, tokenStarts } = decodeRankFile(readFileSync(path));
  return (rank) => tokenBytes.subarray(tokenStarts[rank], tokenStarts[rank + 1]);
}
