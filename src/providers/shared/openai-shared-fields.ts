/**
 * Top-level fields the two OpenAI wire families (Chat Completions and Responses) share with one
 * meaning. A caller's unknown fields otherwise reach only an upstream of the format they came in
 * (is-passthrough-from.ts); these reach either OpenAI family, so a prompt-cache key set on a Chat
 * Completions request still lands when its route speaks Responses, and the other way round.
 */
import type { CanonicalRequest } from "../../canonical/index.js";

const OPENAI_SHARED_FIELDS: ReadonlySet<string> = new Set(["prompt_cache_key", "prompt_cache_retention"]);

type OpenAiFamily = "chat_completions" | "responses";

/** The passthrough fields an upstream of `family` takes from this request, before its own exclusions. */
export function readOpenAiPassthrough(
  request: CanonicalRequest,
  family: OpenAiFamily,
): Record<string, unknown> {
  const from = request.passthroughFormat;
  if (from === undefined || from === family) return request.passthrough;
  if (from !== "chat_completions" && from !== "responses") return {};
  const shared: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request.passthrough)) {
    if (OPENAI_SHARED_FIELDS.has(key)) shared[key] = value;
  }
  return shared;
}
