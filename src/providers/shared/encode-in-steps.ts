/**
 * An upstream request body of megabytes, encoded to UTF-8 a megabyte at a time with other
 * requests' I/O let in between. Handed a string, undici encodes it in one go; on a machine where
 * fresh memory is slow to touch, ten megabytes took it tens of milliseconds of one turn.
 */
import { letIoIn } from "./loop-turn.js";

/** Bodies from this many characters on are encoded in steps. */
export const LARGE_BODY_CHARS = 256 * 1024;
const STEP_CHARS = 1024 * 1024;

export async function encodeUtf8InSteps(text: string): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(text, "utf8"));
  let offset = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + STEP_CHARS);
    // A surrogate pair is never split between two steps (each half alone would encode as U+FFFD).
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    offset += bytes.write(text.slice(start, end), offset, "utf8");
    start = end;
    if (start < text.length) await letIoIn();
  }
  return bytes;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
