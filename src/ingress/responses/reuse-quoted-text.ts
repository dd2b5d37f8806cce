/**
 * The closing frames of a streamed Responses answer carry its whole text four times
 * (`output_text.done`, `content_part.done`, `output_item.done`, and the output of
 * `response.completed`), and the text of a long answer is megabytes: escaping it into JSON four
 * times holds the event loop four times as long as once. A long text is quoted once
 * (`quote`) and spliced into the JSON of each frame that holds it (`stringifyReusing`).
 */
import { randomBytes } from "node:crypto";

/** Texts from this many characters on are quoted once and reused. */
export const REUSED_TEXT_CHARS = 64 * 1024;

/** Marks a reused text's place in JSON.stringify's output; no text contains it by chance. */
const MARKER = `hi-quoted-${randomBytes(8).toString("hex")}-`;

export class QuotedTexts {
  private readonly texts: Array<{ text: string; json: string }> = [];

  /** JSON.stringify(text), kept for the frames after this one when the text is long. */
  quote(text: string): string {
    const known = this.find(text);
    if (known !== undefined) return known.json;
    const json = JSON.stringify(text);
    if (text.length >= REUSED_TEXT_CHARS) this.texts.push({ text, json });
    return json;
  }

  /** JSON.stringify(value), with the long texts quoted before spliced in instead of escaped again. */
  stringifyReusing(value: unknown): string {
    if (this.texts.length === 0) return JSON.stringify(value);
    const used = new Set<number>();
    const json = JSON.stringify(value, (_key, member: unknown) => {
      if (typeof member !== "string" || member.length < REUSED_TEXT_CHARS) return member;
      const index = this.texts.findIndex((known) => known.text === member);
      if (index < 0) return member;
      used.add(index);
      return `${MARKER}${index}`;
    });
    let spliced = json;
    for (const index of used) spliced = spliced.split(`"${MARKER}${index}"`).join(this.texts[index]!.json);
    return spliced;
  }

  private find(text: string): { text: string; json: string } | undefined {
    if (text.length < REUSED_TEXT_CHARS) return undefined;
    return this.texts.find((known) => known.text === text);
  }
}
