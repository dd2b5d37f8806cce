/** Readers for the non-standard and loosely typed fields of Chat messages and deltas. */
import { randomInt } from "node:crypto";
import type { ChatMessageWire } from "./wire-types.js";

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * Reasoning text of a message or delta. Hosts use `reasoning_content` (DeepSeek, vLLM) or
 * `reasoning` (OpenRouter, newer vLLM); some send both with the same text, so one is read, never
 * both.
 */
export function readReasoningText(message: ChatMessageWire): string {
  if (typeof message.reasoning_content === "string" && message.reasoning_content !== "") {
    return message.reasoning_content;
  }
  return typeof message.reasoning === "string" ? message.reasoning : "";
}

/**
 * Complete tool-call arguments as one JSON string: strings are kept byte-exact, an object (some
 * hosts send one) is serialised once, and absent or empty arguments become `{}` so that clients
 * parsing them never see invalid JSON.
 */
export function normalizeArguments(value: unknown): string {
  if (typeof value === "string") return value === "" ? "{}" : value;
  if (value === null || value === undefined) return "{}";
  return JSON.stringify(value);
}

/** A tool-call id in OpenAI's own shape (`call_` + 24 alphanumerics) for hosts that send none. */
export function createToolCallId(): string {
  let suffix = "";
  for (let position = 0; position < 24; position += 1) suffix += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return `call_${suffix}`;
}
