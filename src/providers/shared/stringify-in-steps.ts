/**
 * JSON text of a large value made a slice at a time, with other requests' I/O let in between.
 * `JSON.stringify` is one call whatever the value holds: a string of megabytes (a long prompt) or
 * hundreds of thousands of small values (an object of 600 objects of 1,000 members, inside every
 * shape bound of the body reader) each hold the event loop for as long as the whole text takes.
 * Here a value small enough is stringified at once, as usual; a larger object or array is written
 * member by member (each member again at once if small), a long string in slices, and the writer
 * lets I/O in whenever the loop's turn has run past its budget (loop-turn.ts). The text is the
 * one `JSON.stringify` writes.
 */
import { encodeUtf8InSteps, LARGE_BODY_CHARS } from "./encode-in-steps.js";
import { letIoIn, readTurnMs, TURN_BUDGET_MS } from "./loop-turn.js";

/** Strings from this many characters on are serialised in slices of this size. */
const LONG_STRING_CHARS = 256 * 1024;
/**
 * A value of at most this much work is stringified in one call: one unit per value and member
 * name, one per 64 characters of a string (so a long string alone exceeds it).
 */
const AT_ONCE_UNITS = 4096;
/** Characters gathered before they are kept as one piece (or encoded, for a body). */
const PIECE_CHARS = 64 * 1024;
/** Members written between two looks at the clock. */
const MEMBERS_PER_CHECK = 64;

/** The body as JSON text (a short one) or UTF-8 bytes (a long one, made in steps). */
export async function serialiseBodyInSteps(body: unknown): Promise<string | Buffer> {
  if (fitsAtOnce(body)) {
    const text = JSON.stringify(body);
    return text.length < LARGE_BODY_CHARS ? text : encodeUtf8InSteps(text);
  }
  const sink = new JsonSink(true);
  await writeValue(body, sink);
  await letIoIn();
  return sink.bytes();
}

/** `JSON.stringify(value)` (of an object or array), made in slices when the value is large. */
export async function stringifyInSteps(value: object): Promise<string> {
  if (fitsAtOnce(value)) return JSON.stringify(value);
  const sink = new JsonSink(false);
  await writeValue(value, sink);
  await letIoIn();
  return sink.text();
}

/** The text written so far, in pieces: strings, or their UTF-8 bytes. */
class JsonSink {
  private current = "";
  private readonly texts: string[] = [];
  private readonly buffers: Buffer[] = [];
  /** Members written since the writer last looked at the turn's clock. */
  membersSinceCheck = 0;

  constructor(private readonly encode: boolean) {}

  push(text: string): void {
    this.current += text;
    if (this.current.length >= PIECE_CHARS) this.keep();
  }

  text(): string {
    this.keep();
    return this.texts.join("");
  }

  bytes(): Buffer {
    this.keep();
    return Buffer.concat(this.buffers);
  }

  private keep(): void {
    if (this.current === "") return;
    if (this.encode) this.buffers.push(Buffer.from(this.current, "utf8"));
    else this.texts.push(this.current);
    this.current = "";
  }
}

/** Writes a value that does not fit at once: a long string, or a plain object or array. */
async function writeValue(value: unknown, sink: JsonSink): Promise<void> {
  if (typeof value === "string") return writeLongString(value, sink);
  if (Array.isArray(value)) {
    sink.push("[");
    for (let index = 0; index < value.length; index++) {
      if (index > 0) sink.push(",");
      const item = value[index];
      if (isOmitted(item)) sink.push("null");
      else await writeMember(item, sink);
    }
    sink.push("]");
    return;
  }
  sink.push("{");
  let first = true;
  for (const key of Object.keys(value as object)) {
    const item = (value as Record<string, unknown>)[key];
    if (isOmitted(item)) continue;
    sink.push(`${first ? "" : ","}${JSON.stringify(key)}:`);
    first = false;
    await writeMember(item, sink);
  }
  sink.push("}");
}

/** One member of an object or array: at once when small, in steps otherwise; then I/O if due. */
async function writeMember(item: unknown, sink: JsonSink): Promise<void> {
  if (fitsAtOnce(item)) sink.push(JSON.stringify(item) ?? "null");
  else await writeValue(item, sink);
  if (++sink.membersSinceCheck < MEMBERS_PER_CHECK) return;
  sink.membersSinceCheck = 0;
  if (readTurnMs() > TURN_BUDGET_MS) await letIoIn();
}

async function writeLongString(text: string, sink: JsonSink): Promise<void> {
  sink.push('"');
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + LONG_STRING_CHARS);
    // A surrogate pair is never split between two slices (each half alone would be escaped).
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    const quoted = JSON.stringify(text.slice(start, end));
    sink.push(quoted.slice(1, -1));
    start = end;
    await letIoIn();
  }
  sink.push('"');
}

/** Small enough for one JSON.stringify call: at most AT_ONCE_UNITS of work (bounded walk). */
function fitsAtOnce(value: unknown): boolean {
  return measure(value, AT_ONCE_UNITS) >= 0;
}

/** What is left of `budget` after the value's work; negative once exceeded (the walk stops there). */
function measure(value: unknown, budget: number): number {
  if (typeof value === "string") return budget - 1 - (value.length >> 6);
  // Primitives, and values with their own toJSON (dates): stringified whole.
  if (typeof value !== "object" || value === null || hasToJson(value)) return budget - 1;
  let left = budget - 1;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && left >= 0; index++) left = measure(value[index], left);
    return left;
  }
  for (const key in value) {
    if (left < 0) break;
    left = measure((value as Record<string, unknown>)[key], left - 1 - (key.length >> 6));
  }
  return left;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === "function";
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
