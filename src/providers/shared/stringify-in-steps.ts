/**
 * An upstream request body holding a string of megabytes (a long prompt), serialised and encoded
 * to UTF-8 a slice at a time with other requests' I/O let in between. `JSON.stringify` of such a
 * body is one call that copies and escapes the whole string, tens of milliseconds on a loaded
 * machine; here everything else is serialised as usual and only the long strings go in slices.
 */
import { encodeUtf8InSteps, LARGE_BODY_CHARS } from "./encode-in-steps.js";

/** Strings from this many characters on are serialised in slices of this size. */
const LONG_STRING_CHARS = 256 * 1024;

/** A long string, serialised later in slices. */
class LongString {
  constructor(readonly text: string) {}
}

/** The body as JSON text (a short one) or UTF-8 bytes (a long one, made in steps). */
export async function serialiseBodyInSteps(body: unknown): Promise<string | Buffer> {
  if (!containsLongString(body)) {
    const text = JSON.stringify(body);
    return text.length < LARGE_BODY_CHARS ? text : encodeUtf8InSteps(text);
  }
  const parts: Array<string | LongString> = [];
  writeValue(body, parts);
  const buffers: Buffer[] = [];
  for (const part of parts) {
    if (typeof part === "string") {
      buffers.push(Buffer.from(part, "utf8"));
      continue;
    }
    const { text } = part;
    buffers.push(Buffer.from('"'));
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + LONG_STRING_CHARS);
      // A surrogate pair is never split between two slices (each half alone would be escaped).
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
      const quoted = JSON.stringify(text.slice(start, end));
      buffers.push(Buffer.from(quoted.slice(1, -1), "utf8"));
      start = end;
      await letIoIn();
    }
    buffers.push(Buffer.from('"'));
  }
  await letIoIn();
  return Buffer.concat(buffers);
}

function containsLongString(value: unknown): boolean {
  if (typeof value === "string") return value.length >= LONG_STRING_CHARS;
  if (typeof value !== "object" || value === null || hasToJson(value)) return false;
  if (Array.isArray(value)) return value.some(containsLongString);
  for (const key in value) {
    if (containsLongString((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** Appends `value` as JSON text, as JSON.stringify writes it, with its long strings set apart. */
function writeValue(value: unknown, parts: Array<string | LongString>): void {
  if (!containsLongString(value)) {
    parts.push(JSON.stringify(value) ?? "null");
    return;
  }
  if (typeof value === "string") {
    parts.push(new LongString(value));
    return;
  }
  if (Array.isArray(value)) {
    parts.push("[");
    value.forEach((item, index) => {
      if (index > 0) parts.push(",");
      writeValue(isOmitted(item) ? null : item, parts);
    });
    parts.push("]");
    return;
  }
  parts.push("{");
  let first = true;
  for (const key of Object.keys(value as object)) {
    const item = (value as Record<string, unknown>)[key];
    if (isOmitted(item)) continue;
    parts.push(`${first ? "" : ","}${JSON.stringify(key)}:`);
    first = false;
    writeValue(item, parts);
  }
  parts.push("}");
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

/** Two setImmediates: the first may run in the same turn as an I/O callback, the second after the next poll for I/O. */
function letIoIn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
