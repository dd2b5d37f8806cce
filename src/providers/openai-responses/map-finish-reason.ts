import type { FinishReason } from "../../canonical/index.js";

/**
 * Responses has no finish reason, only a status:
 * `completed` is a tool-call finish when the output holds a function call (agent loops continue
 * only on that), a refusal when the answer was a refusal, else a clean stop; `incomplete`
 * says why in `incomplete_details.reason`. A missing status (some compatible servers) counts as
 * completed; anything else (`cancelled`, `in_progress`, unknown reasons) is `other`, never a
 * silent clean stop.
 */
export function mapResponsesFinishReason(
  status: string | null | undefined,
  incompleteReason: string | null | undefined,
  context: { hasToolCalls: boolean; hasRefusal: boolean },
): FinishReason {
  if (status === "completed" || status === null || status === undefined) {
    if (context.hasToolCalls) return "tool-calls";
    return context.hasRefusal ? "refusal" : "stop";
  }
  if (status === "incomplete") {
    if (incompleteReason === "max_output_tokens") return "length";
    if (incompleteReason === "content_filter") return "content-filter";
  }
  return "other";
}

/** The raw value kept next to the mapped one: the incomplete reason when there is one. */
export function readRawFinishReason(
  status: string | null | undefined,
  incompleteReason: string | null | undefined,
): string | undefined {
  if (typeof incompleteReason === "string" && incompleteReason !== "") return incompleteReason;
  return typeof status === "string" && status !== "" ? status : undefined;
}
