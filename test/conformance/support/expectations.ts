/**
 * What each ingress format must say for a canonical outcome: the finish value (docs/formats.md,
 * "Stop and finish reasons") and the usage fields (Anthropic-format `input_tokens` excludes cache
 * reads and writes; the OpenAI formats include them).
 */
import type { UsageNumbers } from "../../helpers/scenario-scripts.js";
import type { FormatId } from "./format-drivers.js";

export type CanonicalFinish = "stop" | "length" | "tool-calls" | "content-filter" | "refusal" | "pause";

/** The format's finish value, as the format drivers read it (Responses: status[:reason]). */
export const FORMAT_FINISH: Record<FormatId, Record<CanonicalFinish, string>> = {
  chat: {
    stop: "stop",
    length: "length",
    "tool-calls": "tool_calls",
    "content-filter": "content_filter",
    refusal: "content_filter",
    pause: "stop",
  },
  responses: {
    stop: "completed",
    length: "incomplete:max_output_tokens",
    "tool-calls": "completed",
    "content-filter": "incomplete:content_filter",
    refusal: "incomplete:content_filter",
    pause: "completed",
  },
  messages: {
    stop: "end_turn",
    length: "max_tokens",
    "tool-calls": "tool_use",
    "content-filter": "refusal",
    refusal: "refusal",
    pause: "pause_turn",
  },
};

/** Canonical token counts as each format must report them (see projectUsage in format-drivers.ts). */
export function expectedUsage(
  format: FormatId,
  usage: UsageNumbers & { cacheWrite?: number },
): Record<string, number> {
  const cacheWrite = usage.cacheWrite ?? 0;
  switch (format) {
    case "chat":
      return {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        cached_tokens: usage.cached,
        cache_write_tokens: cacheWrite,
        reasoning_tokens: usage.reasoning,
      };
    case "responses":
      return {
        input_tokens: usage.input,
        output_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        cached_tokens: usage.cached,
        cache_write_tokens: cacheWrite,
        reasoning_tokens: usage.reasoning,
      };
    case "messages":
      // Anthropic's input_tokens is the uncached remainder; cache reads and writes are beside it.
      return {
        input_tokens: usage.input - usage.cached - cacheWrite,
        output_tokens: usage.output,
        cache_read_input_tokens: usage.cached,
        cache_creation_input_tokens: cacheWrite,
      };
  }
}
