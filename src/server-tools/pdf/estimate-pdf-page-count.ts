/**
 * A PDF's page count without parsing it, for sizing a spend reservation before the document is
 * read: one native byte scan (Buffer.indexOf) for page objects (`/Type /Page`) and page-tree
 * counts (`/Count n`), the larger of the two.
 *
 * It is an upper bound for well-formed files whose objects are in plain sight: an incremental
 * update that replaced a page, or an outline's `/Count`, only makes it larger. When the file has
 * compressed object streams (`/ObjStm`, common since PDF 1.5), page objects may be inside them
 * and no scan can see them: the answer is then `undefined` (unknown), as it is when nothing was
 * found at all. A caller reserves for the page cap when the count is unknown, and never for more
 * than the page cap in any case.
 */

const TYPE = Buffer.from("/Type");
const PAGE = Buffer.from("/Page");
const COUNT = Buffer.from("/Count");
const OBJECT_STREAM = Buffer.from("/ObjStm");
const MAX_COUNT_DIGITS = 9;

export function estimatePdfPageCount(bytes: Uint8Array): number | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.indexOf(OBJECT_STREAM) >= 0) return undefined;
  let pageObjects = 0;
  for (let at = buffer.indexOf(TYPE); at >= 0; at = buffer.indexOf(TYPE, at + TYPE.length)) {
    const value = skipWhitespace(buffer, at + TYPE.length);
    if (startsWithAt(buffer, PAGE, value) && !isRegularCharacter(buffer[value + PAGE.length])) {
      pageObjects++;
    }
  }
  let largestCount = 0;
  for (let at = buffer.indexOf(COUNT); at >= 0; at = buffer.indexOf(COUNT, at + COUNT.length)) {
    let cursor = skipWhitespace(buffer, at + COUNT.length);
    let count = 0;
    let digits = 0;
    while (digits < MAX_COUNT_DIGITS && cursor < buffer.length && isDigit(buffer[cursor])) {
      count = count * 10 + (buffer[cursor] - 0x30);
      cursor++;
      digits++;
    }
    if (digits > 0 && count > largestCount) largestCount = count;
  }
  const estimate = Math.max(pageObjects, largestCount);
  return estimate > 0 ? estimate : undefined;
}

function skipWhitespace(buffer: Buffer, from: number): number {
  let cursor = from;
  while (cursor < buffer.length && isWhitespace(buffer[cursor])) cursor++;
  return cursor;
}

function startsWithAt(buffer: Buffer, prefix: Buffer, at: number): boolean {
  if (at + prefix.length > buffer.length) return false;
  return buffer.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** PDF white-space characters: NUL, tab, line feed, form feed, carriage return, space. */
function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

/** A byte that continues a name (`/Pages` is not `/Page`); undefined (end of file) does not. */
function isRegularCharacter(byte: number | undefined): boolean {
  if (byte === undefined || isWhitespace(byte)) return false;
  // Delimiters: ( ) < > [ ] { } / %
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
