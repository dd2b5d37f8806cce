import { randomInt } from "node:crypto";

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * The Gemini API sends no function-call ids, so each call gets one in OpenAI's shape (`call_` + 24
 * alphanumerics, accepted by every ingress format's clients). Random, never derived from the name:
 * three calls to one tool must stay three calls.
 */
export function createToolCallId(): string {
  let suffix = "";
  for (let position = 0; position < 24; position += 1) suffix += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return `call_${suffix}`;
}
