/**
 * A custom call's streamed `{"input":"…"}` arguments (canonical/result.ts) back into its input
 * text, delta by delta, for the `response.custom_tool_call_input.delta` events: the prefix is
 * skipped, JSON escapes are decoded (one split between deltas waits for its rest), and the closing
 * quote ends the text. Deltas may be cut anywhere (parts held by the engine are merged), so nothing
 * here assumes the adapter's cuts. Work per delta is linear in the delta.
 */
import { CUSTOM_INPUT_PREFIX } from "../../canonical/index.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class CustomInputDecoder {
  private skip = CUSTOM_INPUT_PREFIX.length;
  /** The start of an escape whose rest has not come yet. */
  private pending = "";
  private ended = false;

  /** The input text this piece of the arguments adds ("" when it adds none yet). */
  decode(piece: string): string {
    if (this.ended) return "";
    let text = piece;
    if (this.skip > 0) {
      const cut = Math.min(this.skip, text.length);
      this.skip -= cut;
      text = text.slice(cut);
    }
    text = this.pending + text;
    this.pending = "";
    let out = "";
    let start = 0;
    let index = 0;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === QUOTE) {
        this.ended = true;
        return out + text.slice(start, index);
      }
      if (code !== BACKSLASH) {
        index += 1;
        continue;
      }
      const length = text[index + 1] === "u" ? 6 : 2;
      if (index + length > text.length) {
        this.pending = text.slice(index);
        return out + text.slice(start, index);
      }
      out += text.slice(start, index) + unescapeSequence(text.slice(index, index + length));
      index += length;
      start = index;
    }
    return out + text.slice(start);
  }
}

function unescapeSequence(sequence: string): string {
  try {
    return JSON.parse(`"${sequence}"`) as string;
  } catch {
    // Not a JSON escape (arguments the gateway did not make): kept as it came.
    return sequence;
  }
}
