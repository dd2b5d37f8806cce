/** Record ids: a type prefix plus 24 random base62 characters (~143 bits), e.g. `ws_3kQ…`. */
import { randomInt } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ID_BODY_LENGTH = 24;

export function createId(prefix: string): string {
  let body = "";
  // randomInt avoids the modulo bias of mapping bytes onto 62 symbols.
  for (let index = 0; index < ID_BODY_LENGTH; index++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix}_${body}`;
}
