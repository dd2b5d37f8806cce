/**
 * `POST /api/v1/messages/count_tokens`: a local estimate of a messages request's prompt, without an
 * upstream call (clients such as Claude Code send dozens a second, so the count must
 * exist, include the system prompt and tools, and never spend a generation rate limit).
 *
 * The estimate is the metering tokenizer's count of every text, tool-call and tool definition
 * (metering/estimate-usage.ts: exact up to a time budget, extrapolated past it, so any body
 * answers within milliseconds), plus images and documents (estimate-media-tokens.ts), plus the
 * system prompt the provider adds when tools are present: Anthropic publishes 346 tokens (tool choice
 * auto or none) and 313 (any or a named tool) for its current models.
 */
import type { CanonicalRequest } from "../../canonical/index.js";
import { estimateInputTokens, TokenCounter } from "../../metering/estimate-usage.js";
import type { HeaderReader } from "../ingress-format.js";
import { decodeCountTokensRequest } from "./decode-request.js";
import { estimateMediaTokens } from "./estimate-media-tokens.js";

export const TOOL_USE_PROMPT_TOKENS = 346;
export const FORCED_TOOL_USE_PROMPT_TOKENS = 313;

/** Validates like a messages request (`max_tokens` optional); throws `invalid_request` likewise. */
export function countMessagesTokens(body: unknown, headers?: HeaderReader): { input_tokens: number } {
  const request = decodeCountTokensRequest(body, headers);
  // One counting budget for the whole request: linear and bounded in time whatever its size.
  const counter = new TokenCounter();
  return {
    input_tokens:
      estimateInputTokens(request, counter) +
      estimateMediaTokens(request, counter) +
      estimateToolPromptTokens(request),
  };
}

function estimateToolPromptTokens(request: CanonicalRequest): number {
  if (request.tools.length === 0) return 0;
  const forced = request.toolChoice?.type === "required" || request.toolChoice?.type === "tool";
  return forced ? FORCED_TOOL_USE_PROMPT_TOKENS : TOOL_USE_PROMPT_TOKENS;
}
