/**
 * Canonical finish reason → the response's `status` and `incomplete_details`: output
 * cut by a token cap or a content filter is `incomplete`; everything else is `completed` (a tool call
 * is visible from the output items, not from the status).
 */
import type { FinishReason } from "../../canonical/index.js";

export type IncompleteReason = "max_output_tokens" | "content_filter";

export interface ResponseStatus {
  status: "completed" | "incomplete";
  incomplete_details: { reason: IncompleteReason } | null;
}

const INCOMPLETE_REASONS: Partial<Record<FinishReason, IncompleteReason>> = {
  length: "max_output_tokens",
  // Cut by the context window rather than the cap: still a truncation to the client.
  "context-window": "max_output_tokens",
  "content-filter": "content_filter",
  // Anthropic's `refusal` is a safety stop; the vocabulary has no closer reason.
  refusal: "content_filter",
};

export function mapResponseStatus(reason: FinishReason): ResponseStatus {
  const incomplete = INCOMPLETE_REASONS[reason];
  return incomplete === undefined
    ? { status: "completed", incomplete_details: null }
    : { status: "incomplete", incomplete_details: { reason: incomplete } };
}
