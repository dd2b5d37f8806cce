/**
 * Parses a large scanned body piece by piece, letting other requests' I/O run between pieces.
 *
 * One `JSON.parse` of a body of megabytes holds the event loop for as long as it takes, and that
 * grows with the number of values as much as with the bytes (a million empty arrays take about a
 * second). Here the containers and strings the scan found large (json-shape-scanner.ts, `spans`)
 * are built member by member; everything small inside them is one `JSON.parse` of its own bytes;
 * a long string is decoded in slices. The loop is given back whenever a few milliseconds have
 * passed. The scan has already checked the structure; the pieces' parses check the tokens.
 */
import { YIELD_AFTER_MS, yieldToEventLoop } from "../../engine/yield-to-event-loop.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ScannedJson } from "./json-shape-scanner.js";

/** Bytes of a long string decoded at once. */
const STRING_SLICE_BYTES = 512 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export async function parseJsonInSlices(bytes: Buffer, scanned: ScannedJson): Promise<unknown> {
  const parser = new SliceParser(bytes, scanned);
  const [value] = await parser.readValue(scanned.rootStart);
  return value;
}

class SliceParser {
  private sliceStarted = performance.now();

  constructor(
    private readonly bytes: Buffer,
    private readonly scanned: ScannedJson,
  ) {}

  /** The value starting at `start`, and where it ends. */
  async readValue(start: number): Promise<[unknown, number]> {
    const end = this.scanned.spans.get(start);
    if (end === undefined) {
      const smallEnd = findValueEnd(this.bytes, start);
      return [parseText(this.bytes.toString("utf8", start, smallEnd)), smallEnd];
    }
    await this.pause();
    const byte = this.bytes[start];
    if (byte === QUOTE) return [await this.readString(start, end), end];
    if (byte === 0x7b) return [await this.readObject(start), end];
    return [await this.readArray(start), end];
  }

  private async readObject(start: number): Promise<Record<string, unknown>> {
    const bytes = this.bytes;
    const object: Record<string, unknown> = {};
    let at = skipWhitespace(bytes, start + 1);
    if (bytes[at] === 0x7d) return object;
    for (;;) {
      const nameEnd = findStringEnd(bytes, at);
      const name = parseText(bytes.toString("utf8", at, nameEnd)) as string;
      at = skipWhitespace(bytes, skipWhitespace(bytes, nameEnd) + 1); // past the ':'
      const [value, valueEnd] = await this.readValue(at);
      if (name === "__proto__") {
        // As JSON.parse does: an own member, not the object's prototype.
        Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        object[name] = value;
      }
      at = skipWhitespace(bytes, valueEnd);
      if (bytes[at] !== 0x2c) return object;
      at = skipWhitespace(bytes, at + 1);
      await this.pause();
    }
  }

  private async readArray(start: number): Promise<unknown[]> {
    const bytes = this.bytes;
    const array: unknown[] = [];
    let at = skipWhitespace(bytes, start + 1);
    if (bytes[at] === 0x5d) return array;
    for (;;) {
      const [value, valueEnd] = await this.readValue(at);
      array.push(value);
      at = skipWhitespace(bytes, valueEnd);
      if (bytes[at] !== 0x2c) return array;
      at = skipWhitespace(bytes, at + 1);
      await this.pause();
    }
  }

  /** A long string, `start` at its opening quote and `end` just after its closing one. */
  private async readString(start: number, end: number): Promise<string> {
    const bytes = this.bytes;
    const escaped = this.scanned.escapedStrings.has(start);
    const pieces: string[] = [];
    let from = start + 1;
    const last = end - 1;
    while (from < last) {
      let to = Math.min(last, from + STRING_SLICE_BYTES);
      // Cut after a whole escape sequence and a whole UTF-8 character.
      if (escaped) to = skipPastEscapes(bytes, from, to);
      while (to < last && (bytes[to] & 0xc0) === 0x80) to++;
      // Parsed rather than only decoded: the parse refuses control characters, as JSON.parse would.
      pieces.push(parseText(`"${bytes.toString("utf8", from, to)}"`) as string);
      from = to;
      await this.pause();
    }
    return pieces.join("");
  }

  /** Gives the event loop back once this turn has run a few milliseconds. */
  private async pause(): Promise<void> {
    if (performance.now() - this.sliceStarted < YIELD_AFTER_MS) return;
    await yieldToEventLoop();
    this.sliceStarted = performance.now();
  }
}

/** The first position at or after `target` that is not inside an escape sequence. */
function skipPastEscapes(bytes: Buffer, from: number, target: number): number {
  let at = from;
  while (at < target) {
    if (bytes[at] === BACKSLASH) at += bytes[at + 1] === 0x75 ? 6 : 2;
    else at++;
  }
  return at;
}

function skipWhitespace(bytes: Buffer, at: number): number {
  let position = at;
  for (;;) {
    const byte = bytes[position];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return position;
    position++;
  }
}

/** Just after the closing quote of the string opening at `start`. */
function findStringEnd(bytes: Buffer, start: number): number {
  let at = start + 1;
  const length = bytes.length;
  while (at < length) {
    const byte = bytes[at];
    if (byte === BACKSLASH) at += 2;
    else if (byte === QUOTE) return at + 1;
    else at++;
  }
  return length;
}

/** Just after the value starting at `start`: a string, a container (skipping its strings) or a scalar. */
function findValueEnd(bytes: Buffer, start: number): number {
  const first = bytes[start];
  if (first === QUOTE) return findStringEnd(bytes, start);
  const length = bytes.length;
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    let at = start;
    while (at < length) {
      const byte = bytes[at];
      if (byte === QUOTE) {
        at = findStringEnd(bytes, at);
        continue;
      }
      if (byte === 0x7b || byte === 0x5b) depth++;
      else if (byte === 0x7d || byte === 0x5d) {
        depth--;
        if (depth === 0) return at + 1;
      }
      at++;
    }
    return length;
  }
  let at = start;
  while (at < length) {
    const byte = bytes[at];
    if (
      byte === 0x2c ||
      byte === 0x7d ||
      byte === 0x5d ||
      byte === 0x20 ||
      byte === 0x0a ||
      byte === 0x0d ||
      byte === 0x09
    ) {
      return at;
    }
    at++;
  }
  return length;
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw GatewayError.invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, null);
  }
}
