/**
 * Checks the shape of a JSON body while its bytes arrive, before anything parses it: nesting
 * depth, members per object, items per array, and the size of member names and strings are
 * bounded, and a body past a bound is refused with `invalid_request` naming the bound and the
 * path of the field (`tools[0].parameters.p`).
 *
 * `JSON.parse` takes any shape, and its cost is not in the bytes alone: 5 MB of `[` or an object
 * of 100,000 members hold the event loop for up to a second before anything else could look at
 * them. The scan is a state machine over the bytes, chunk by chunk, with constant work per byte
 * and nothing allocated per value; what it does not check (numbers, literals, escapes, control
 * characters in strings) the parse that follows does.
 *
 * It also notes where each large value starts and ends, so a large body can be parsed piecewise
 * (parse-json-in-slices.ts) instead of in one call.
 */
import { GatewayError } from "../../errors/gateway-error.js";

export interface JsonShapeLimits {
  /** Levels of objects and arrays; the body itself is the first. */
  maxDepth: number;
  /** Members of one object. */
  maxMembers: number;
  /** Items of one array. */
  maxItems: number;
  /** Bytes of one member name, as sent (escapes included). */
  maxNameBytes: number;
  /** Bytes of one string value, as sent (escapes included). */
  maxStringBytes: number;
}

export const MAX_JSON_DEPTH = 128;

/**
 * Real requests nest a few levels, JSON schemas a few dozen; an object has a few members, a
 * schema's `properties` some hundreds; an array holds at most the messages, content blocks or
 * tools a request may have (their own caps, docs/limits.md, are lower). A string may be as long as
 * the body (a long prompt is one string).
 */
export const DEFAULT_JSON_SHAPE_LIMITS: JsonShapeLimits = {
  maxDepth: MAX_JSON_DEPTH,
  maxMembers: 10_000,
  maxItems: 100_000,
  maxNameBytes: 65_536,
  maxStringBytes: Number.MAX_SAFE_INTEGER,
};

/** Values at least this long (bytes) are recorded with their end: they are parsed apart. */
export const SPAN_BYTES = 16 * 1024;

export interface ScannedJson {
  /** Where the top-level value starts (after leading whitespace). */
  rootStart: number;
  /** Start → end (exclusive) of every container and string of at least SPAN_BYTES bytes. */
  spans: Map<number, number>;
  /** Starts of the strings in `spans` that contain an escape. */
  escapedStrings: Set<number>;
  /** Objects, arrays and members/items in all. */
  nodes: number;
}

// Scanner states.
const VALUE = 0; // a value is expected
const VALUE_OR_CLOSE = 1; // after `[`
const NAME_OR_CLOSE = 2; // after `{`
const NAME = 3; // after `,` in an object
const COLON = 4; // after a member name
const AFTER_VALUE = 5; // `,`, a closing bracket, or (top level) the end
const STRING = 6;
const STRING_ESCAPE = 7; // after `\` in a string
const SCALAR = 8; // a number or literal
const DONE = 9; // the top-level value ended

const OBJECT = 0;
const ARRAY = 1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whitespace bytes of RFC 8259: space, tab, LF, CR. */
function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** Bytes that may continue a number or a literal; the parse checks the token itself. */
function isScalarByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    (byte >= 0x61 && byte <= 0x7a) || // a-z
    (byte >= 0x41 && byte <= 0x5a) || // A-Z
    byte === 0x2b || // +
    byte === 0x2d || // -
    byte === 0x2e // .
  );
}

export class JsonShapeScanner {
  private state = VALUE;
  /** Bytes scanned in earlier chunks. */
  private offset = 0;
  private readonly chunks: Uint8Array[] = [];
  private readonly chunkOffsets: number[] = [];
  // The open containers, innermost last.
  private readonly kinds: number[] = [];
  private readonly counts: number[] = [];
  private readonly starts: number[] = [];
  /** Per open object: where its current member's name starts and ends (for error paths). */
  private readonly nameStarts: number[] = [];
  private readonly nameEnds: number[] = [];
  private stringStart = 0;
  private stringIsName = false;
  private stringEscaped = false;
  private rootStart = -1;
  private nodes = 0;
  private readonly spans = new Map<number, number>();
  private readonly escapedStrings = new Set<number>();

  constructor(private readonly limits: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS) {}

  /** Scans the next bytes; throws `invalid_request` at the first byte past a bound or out of place. */
  write(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.chunkOffsets.push(this.offset);
    const length = chunk.length;
    let index = 0;
    let nextQuote = -1;
    let nextBackslash = -1;
    while (index < length) {
      const byte = chunk[index];
      switch (this.state) {
        case STRING: {
          // Most bytes of a body are inside strings: the next quote or backslash is found by
          // memchr (each search starts past the last one found, so a chunk is searched once).
          if (nextQuote < index) nextQuote = indexOrLength(chunk, QUOTE, index);
          if (nextBackslash < index) nextBackslash = indexOrLength(chunk, BACKSLASH, index);
          const end = nextQuote < nextBackslash ? nextQuote : nextBackslash;
          if (end === length) {
            index = end;
            this.checkStringSize(this.offset + end);
            continue;
          }
          if (end === nextBackslash) {
            this.stringEscaped = true;
            this.state = STRING_ESCAPE;
            index = end + 1;
            continue;
          }
          this.closeString(this.offset + end + 1);
          index = end + 1;
          continue;
        }
        case STRING_ESCAPE:
          // The escape's own bytes (`u` and four hex digits included) are checked by the parse;
          // none of them is a quote, so the string goes on.
          this.state = STRING;
          index++;
          continue;
        case SCALAR:
          if (isScalarByte(byte)) {
            index++;
            continue;
          }
          this.state = AFTER_VALUE;
          this.endValue();
          continue; // the byte is looked at again, after the value
        default:
          break;
      }
      if (isWhitespace(byte)) {
        index++;
        continue;
      }
      this.structural(byte, this.offset + index);
      index++;
    }
    this.offset += length;
  }

  /** The body ended: throws unless it held exactly one complete value. */
  finish(): ScannedJson {
    if (this.state === SCALAR && this.kinds.length === 0) {
      this.state = DONE;
    }
    if (this.rootStart === -1)
      throw GatewayError.invalidRequest("Request body is empty; send a JSON object", null);
    if (this.state !== DONE) throw createSyntaxError("the body ends before its JSON does");
    return {
      rootStart: this.rootStart,
      spans: this.spans,
      escapedStrings: this.escapedStrings,
      nodes: this.nodes,
    };
  }

  /** A byte outside strings and scalars that is not whitespace. */
  private structural(byte: number, at: number): void {
    switch (this.state) {
      case VALUE:
      case VALUE_OR_CLOSE:
        if (byte === 0x5d && this.state === VALUE_OR_CLOSE) {
          this.close(at);
          return;
        }
        this.startValue(byte, at);
        return;
      case NAME_OR_CLOSE:
      case NAME:
        if (byte === QUOTE) {
          this.countEntry();
          this.nameStarts[this.nameStarts.length - 1] = at;
          this.nameEnds[this.nameEnds.length - 1] = -1;
          this.startString(at, true);
          return;
        }
        if (byte === 0x7d && this.state === NAME_OR_CLOSE) {
          this.close(at);
          return;
        }
        throw createSyntaxError(`expected a member name at byte ${at}`);
      case COLON:
        if (byte !== 0x3a) throw createSyntaxError(`expected ':' at byte ${at}`);
        this.state = VALUE;
        return;
      case AFTER_VALUE: {
        const depth = this.kinds.length;
        if (depth === 0) throw createSyntaxError(`unexpected data after the JSON value at byte ${at}`);
        const kind = this.kinds[depth - 1];
        if (byte === 0x2c) {
          this.state = kind === OBJECT ? NAME : VALUE;
          return;
        }
        if (byte === (kind === OBJECT ? 0x7d : 0x5d)) {
          this.close(at);
          return;
        }
        throw createSyntaxError(`expected ',' or '${kind === OBJECT ? "}" : "]"}' at byte ${at}`);
      }
      case DONE:
        throw createSyntaxError(`unexpected data after the JSON value at byte ${at}`);
    }
  }

  private startValue(byte: number, at: number): void {
    const depth = this.kinds.length;
    if (depth === 0) {
      if (this.rootStart !== -1)
        throw createSyntaxError(`unexpected data after the JSON value at byte ${at}`);
      this.rootStart = at;
    } else if (this.kinds[depth - 1] === ARRAY) {
      this.countEntry();
    }
    this.nodes++;
    if (byte === 0x7b || byte === 0x5b) {
      if (depth >= this.limits.maxDepth) {
        throw this.createShapeError(
          depth,
          (path) =>
            `${path} is nested more than ${this.limits.maxDepth} levels deep; JSON in a request may nest at most ${this.limits.maxDepth} levels`,
          "",
        );
      }
      const kind = byte === 0x7b ? OBJECT : ARRAY;
      this.kinds.push(kind);
      this.counts.push(0);
      this.starts.push(at);
      this.nameStarts.push(-1);
      this.nameEnds.push(-1);
      this.state = kind === OBJECT ? NAME_OR_CLOSE : VALUE_OR_CLOSE;
      return;
    }
    if (byte === QUOTE) {
      this.startString(at, false);
      return;
    }
    if (isScalarByte(byte)) {
      this.state = SCALAR;
      return;
    }
    throw createSyntaxError(`unexpected '${String.fromCharCode(byte)}' at byte ${at}`);
  }

  /** A member or item starts in the innermost container: counted against its bound. */
  private countEntry(): void {
    const depth = this.kinds.length;
    const count = ++this.counts[depth - 1];
    if (this.kinds[depth - 1] === OBJECT) {
      this.nodes++;
      if (count > this.limits.maxMembers) {
        throw this.createShapeError(
          depth - 1,
          (path) =>
            `${path} has more than ${this.limits.maxMembers} members; an object in a request may have at most ${this.limits.maxMembers}`,
          "the body",
        );
      }
      return;
    }
    if (count > this.limits.maxItems) {
      throw this.createShapeError(
        depth - 1,
        (path) =>
          `${path} has more than ${this.limits.maxItems} items; an array in a request may have at most ${this.limits.maxItems}`,
        "the body",
      );
    }
  }

  private startString(at: number, isName: boolean): void {
    this.stringStart = at;
    this.stringIsName = isName;
    this.stringEscaped = false;
    this.state = STRING;
  }

  private checkStringSize(scannedTo: number): void {
    const size = scannedTo - this.stringStart - 1;
    if (this.stringIsName) {
      if (size > this.limits.maxNameBytes) {
        // The name is not complete: the path names the object that holds it.
        throw this.createShapeError(
          this.kinds.length - 1,
          (path) =>
            `${path} has a member name longer than ${this.limits.maxNameBytes} bytes; names in a request may have at most ${this.limits.maxNameBytes}`,
          "the body",
        );
      }
      return;
    }
    if (size > this.limits.maxStringBytes) {
      throw this.createShapeError(
        this.kinds.length,
        (path) =>
          `${path} is a string longer than ${this.limits.maxStringBytes} bytes; a string in a request may have at most ${this.limits.maxStringBytes}`,
        "the body",
      );
    }
  }

  /** `end`: just after the closing quote. */
  private closeString(end: number): void {
    this.checkStringSize(end - 1);
    if (this.stringIsName) {
      this.nameEnds[this.nameEnds.length - 1] = end;
      this.state = COLON;
      return;
    }
    if (end - this.stringStart >= SPAN_BYTES) {
      this.spans.set(this.stringStart, end);
      if (this.stringEscaped) this.escapedStrings.add(this.stringStart);
    }
    this.state = AFTER_VALUE;
    this.endValue();
  }

  private close(at: number): void {
    const start = this.starts.pop()!;
    this.kinds.pop();
    this.counts.pop();
    this.nameStarts.pop();
    this.nameEnds.pop();
    if (at + 1 - start >= SPAN_BYTES) this.spans.set(start, at + 1);
    this.state = AFTER_VALUE;
    this.endValue();
  }

  /** A value ended: at the top level the body is complete. */
  private endValue(): void {
    if (this.kinds.length === 0) this.state = DONE;
  }

  /**
   * An `invalid_request` whose param is the path (its first four steps, `tools[0].parameters.p`)
   * to the value held at `levels` levels down: the open containers' current members and items.
   */
  private createShapeError(
    levels: number,
    describe: (path: string) => string,
    rootName: string,
  ): GatewayError {
    const steps: Array<string | number> = [];
    for (let level = 0; level < levels && steps.length < 4; level++) {
      if (this.kinds[level] === ARRAY) {
        steps.push(Math.max(0, this.counts[level] - 1));
        continue;
      }
      const start = this.nameStarts[level];
      const end = this.nameEnds[level];
      if (start < 0 || end < 0) break;
      steps.push(this.readName(start, end));
    }
    const path = steps.reduce<string>(
      (joined, key) =>
        typeof key === "number" ? `${joined}[${key}]` : joined === "" ? key : `${joined}.${key}`,
      "",
    );
    if (path === "") return GatewayError.invalidRequest(capitalize(describe(rootName)), null);
    return GatewayError.invalidRequest(describe(path), path);
  }

  /** A member name from the bytes already scanned, decoded (at most its first 64 bytes). */
  private readName(start: number, end: number): string {
    const bytes = this.readBytes(start + 1, Math.min(end - 1, start + 1 + 64));
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  }

  private readBytes(start: number, end: number): Uint8Array {
    const parts: Uint8Array[] = [];
    for (let index = 0; index < this.chunks.length; index++) {
      const chunkStart = this.chunkOffsets[index];
      const chunk = this.chunks[index];
      const chunkEnd = chunkStart + chunk.length;
      if (chunkEnd <= start || chunkStart >= end) continue;
      parts.push(chunk.subarray(Math.max(0, start - chunkStart), Math.min(chunk.length, end - chunkStart)));
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
}

function indexOrLength(chunk: Uint8Array, byte: number, from: number): number {
  const found = chunk.indexOf(byte, from);
  return found === -1 ? chunk.length : found;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function createSyntaxError(detail: string): GatewayError {
  return GatewayError.invalidRequest(`Request body is not valid JSON: ${detail}`, null);
}
