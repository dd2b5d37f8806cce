/**
 * Gemini `finishReason` → canonical.
 *
 * - STOP is both a natural end and a matched stop sequence; a turn that produced function calls
 *   also ends with STOP, and agent loops only continue on a tool-call finish, so calls upgrade it.
 * - The safety family (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, the IMAGE_* filter
 *   reasons, Vertex's MODEL_ARMOR) is a content filter.
 * - MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS are the model failing at tool
 *   use, not a filter: they become `other` (the raw reason travels along), never `content-filter`
 *   (which would tell the caller to rephrase) and never `stop` (which would hide the failure).
 * - Everything else, unknown values included, is `other`: never a silent clean stop.
 */
import type { FinishReason } from "../../canonical/index.js";

const CONTENT_FILTER_REASONS = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
  "MODEL_ARMOR",
]);

export function mapFinishReason(
  rawReason: string | undefined,
  context: { hasToolCalls: boolean },
): FinishReason {
  if (rawReason === "STOP") return context.hasToolCalls ? "tool-calls" : "stop";
  if (rawReason === "MAX_TOKENS") return "length";
  if (rawReason !== undefined && CONTENT_FILTER_REASONS.has(rawReason)) return "content-filter";
  return "other";
}
