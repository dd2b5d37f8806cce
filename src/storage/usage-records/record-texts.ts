/**
 * The JSON text of a record's start or outcome, made once per object and shared by every place
 * that stores it: the start goes to Redis with the reservation and again in the row's batch, the
 * outcome to Redis when the answer ends and again in the batch. Made with `toPostgresJson`, so the
 * same text is fit for a `jsonb` parameter. A start's text is taken when it is first asked for,
 * which for an admitted request is before its admission time is known: `createdAt` travels beside
 * it wherever it matters. Weak: a text goes with its record.
 */
import type { GenerationOutcome, GenerationStart } from "../../engine/generation-record.js";
import { toPostgresJson } from "../sql/postgres-json.js";

const texts = new WeakMap<GenerationStart | GenerationOutcome, string>();

export function jsonTextOf(value: GenerationStart | GenerationOutcome): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = toPostgresJson(value);
    texts.set(value, text);
  }
  return text;
}
