/**
 * How many pages a PDF has, from its bytes, in one pass over them and without a PDF parser: an
 * upper bound used to bound what an upstream bills per page (docs/limits.md).
 *
 * Every `/Type` entry is looked at once:
 * - `/Type /Page` is a page (not `/Pages`, the page-tree nodes, nor `/PageLabel`);
 * - `/Type /Pages` is a page-tree node: its `/Count` is kept, in case it claims more pages;
 * - `/Type /ObjStm` is an object stream: PDF 1.5+ writers (pdfTeX, most office suites) pack the
 *   page dictionaries there, so such a file shows none in its own bytes. FlateDecode streams are
 *   inflated, up to {@link MAX_INFLATED_BYTES} in all (a compression bomb costs no more), and
 *   their entries looked at the same way.
 * The answer is the larger of the pages found and the largest `/Count`. A page counted twice (a
 * page rewritten by an incremental update keeps its old object) only makes the bound larger.
 * `undefined` when nothing is found (an encrypted, damaged or oddly written file) or when the
 * file has more entries or object streams than the limits below let us read: the caller must
 * then assume the worst.
 */
import { constants, inflateSync } from "node:zlib";

/** Inflated object-stream bytes one PDF may cost to read. Page dictionaries take ~100 bytes each. */
export const MAX_INFLATED_BYTES = 4 * 1024 * 1024;
/**
 * `/Type` entries one PDF may make us look at (each costs a native search): a PDF of a thousand
 * pages has a few thousand. Past it the count is unknown.
 */
export const MAX_ENTRIES = 10_000;
/**
 * Object streams one PDF may make us inflate (each costs a zlib set-up). Writers pack
 * 100–200 objects in each, so a file of thousands of pages has tens of them.
 */
const MAX_OBJECT_STREAMS = 256;
/** How far from its `/Type` a dictionary's `/Count`, or an object stream's data, may be. */
const DICTIONARY_REACH = 1_024;

const TYPE = Buffer.from("/Type");
const COUNT = Buffer.from("/Count");
const STREAM = Buffer.from("stream");
const END_STREAM = Buffer.from("endstream");
const SLASH = 0x2f;

interface Tally {
  pages: number;
  maxCount: number;
  entries: number;
  objectStreams: number;
  inflateBudget: number;
}

export function countPdfPages(bytes: Buffer): number | undefined {
  const tally: Tally = {
    pages: 0,
    maxCount: 0,
    entries: 0,
    objectStreams: 0,
    inflateBudget: MAX_INFLATED_BYTES,
  };
  if (!readEntries(bytes, tally, true)) return undefined;
  const total = Math.max(tally.pages, tally.maxCount);
  return total > 0 ? total : undefined;
}

/** Looks at every `/Type` entry of `bytes`; false when a limit was reached (count unknown). */
function readEntries(bytes: Buffer, tally: Tally, outermost: boolean): boolean {
  for (let at = bytes.indexOf(TYPE); at >= 0; at = bytes.indexOf(TYPE, at + TYPE.length)) {
    if (++tally.entries > MAX_ENTRIES) return false;
    if (isNameCharacter(bytes[at + TYPE.length])) continue; // `/TypeFace`
    const value = skipWhiteSpace(bytes, at + TYPE.length);
    if (bytes[value] !== SLASH) continue;
    const name = readName(bytes, value + 1);
    if (name === "Page") tally.pages++;
    else if (name === "Pages") tally.maxCount = Math.max(tally.maxCount, readCount(bytes, at));
    else if (name === "ObjStm" && outermost) {
      const end = readObjectStream(bytes, value, tally);
      if (end === undefined) return false;
      at = Math.max(at, end - TYPE.length); // entries inside the stream's data are data
    }
  }
  return true;
}

/** The `/Count` of the dictionary around `at` (0 when none is near). */
function readCount(bytes: Buffer, at: number): number {
  const from = Math.max(0, at - DICTIONARY_REACH);
  const near = bytes.subarray(from, at + DICTIONARY_REACH);
  const found = near.indexOf(COUNT);
  if (found < 0) return 0;
  let index = skipWhiteSpace(near, found + COUNT.length);
  let value = 0;
  // Ten digits at most: a count is an integer, and a longer run is no page count.
  for (let digits = 0; digits < 10 && near[index] >= 0x30 && near[index] <= 0x39; digits++, index++) {
    value = value * 10 + (near[index] - 0x30);
  }
  return value;
}

/**
 * Inflates the object stream whose dictionary holds `at` and reads its entries. Returns where its
 * data ends, or undefined when the inflate budget ran out.
 */
function readObjectStream(bytes: Buffer, at: number, tally: Tally): number | undefined {
  const keyword = bytes.subarray(at, at + DICTIONARY_REACH).indexOf(STREAM);
  if (keyword < 0) return at;
  let start = at + keyword + STREAM.length;
  if (bytes[start] === 0x0d) start++;
  if (bytes[start] === 0x0a) start++;
  let end = bytes.indexOf(END_STREAM, start);
  if (end < 0) end = bytes.length;
  if (!isZlibStream(bytes, start)) return end; // another filter: nothing readable inside
  if (tally.inflateBudget <= 0 || ++tally.objectStreams > MAX_OBJECT_STREAMS) return undefined;
  let inflated: Buffer;
  try {
    inflated = inflateSync(bytes.subarray(start, end), {
      maxOutputLength: tally.inflateBudget,
      finishFlush: constants.Z_SYNC_FLUSH,
    });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return undefined;
    return end; // a damaged stream: nothing readable inside
  }
  tally.inflateBudget -= inflated.length;
  return readEntries(inflated, tally, false) ? end : undefined;
}

/** The name starting at `at` (after its slash), up to 8 characters: enough to tell the types apart. */
function readName(bytes: Buffer, at: number): string {
  let end = at;
  while (end < at + 8 && isNameCharacter(bytes[end])) end++;
  return isNameCharacter(bytes[end]) ? "" : bytes.toString("latin1", at, end);
}

/** A zlib header (deflate, checksum valid) at `at`: anything else is not worth an inflate. */
function isZlibStream(bytes: Buffer, at: number): boolean {
  return at + 1 < bytes.length && (bytes[at] & 0x0f) === 8 && ((bytes[at] << 8) | bytes[at + 1]) % 31 === 0;
}

/** PDF white space: NUL, TAB, LF, FF, CR, SPACE. */
function skipWhiteSpace(bytes: Buffer, index: number): number {
  let at = index;
  for (;;) {
    const byte = bytes[at];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09 && byte !== 0x0c && byte !== 0x00)
      return at;
    at++;
  }
}

/** A byte that continues a PDF name: not white space, not a delimiter, not the end. */
function isNameCharacter(byte: number | undefined): boolean {
  if (byte === undefined || byte <= 0x20) return false;
  // ( ) < > [ ] { } / %
  return !(
    byte === 0x28 ||
    byte === 0x29 ||
    byte === 0x3c ||
    byte === 0x3e ||
    byte === 0x5b ||
    byte === 0x5d ||
    byte === 0x7b ||
    byte === 0x7d ||
    byte === 0x2f ||
    byte === 0x25
  );
}
