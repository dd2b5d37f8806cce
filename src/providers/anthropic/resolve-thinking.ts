/**
 * Canonical reasoning options → Anthropic `thinking`.
 *
 * Policy (deterministic; every refusal is an `invalid_request` naming the field):
 * - Thinking is sent only to models whose catalog features include `reasoning`; for others the
 *   reasoning options are ignored (the model cannot think, and Anthropic would reject the field).
 * - `enabled: false` or effort `none` → no thinking.
 * - An explicit budget (messages-format `thinking.budget_tokens`) is sent as is. It must be at
 *   least 1024 and below the output cap (thinking counts towards `max_tokens`); otherwise the
 *   request is refused rather than the caller's `max_tokens` being silently raised (which would
 *   also exceed what admission reserved) or the budget silently cut. With the caller's
 *   `interleaved-thinking-*` beta the budget covers every thinking block of the turn and may
 *   exceed `max_tokens` ("interleaved thinking"), so only the minimum holds.
 * - An effort becomes a budget from {@link EFFORT_BUDGET_TOKENS}, bounded by `max_tokens - 1`;
 *   when that leaves less than the 1024 minimum the request is refused (naming `max_tokens`).
 *   `enabled: true` without effort or budget uses the `high` entry (Anthropic's default effort).
 * - Downgrade: in an active tool loop (tool results after the last assistant turn) whose last
 *   assistant turn has no thinking state this upstream accepts — history from another model, or
 *   from a format that cannot carry signatures — thinking is left off. Anthropic would reject the
 *   request otherwise ("a final assistant message must start with a thinking block"), and its own
 *   advice for that case is to disable thinking.
 */
import type { CanonicalMessage } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { isStateForUpstream } from "../shared/is-state-for-upstream.js";
import { PROVIDER_KIND } from "./convert-messages.js";
import type { AnthropicThinkingConfig } from "./wire-types.js";

export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** Thinking budget per effort level, in tokens (bounded by `max_tokens - 1` at use). */
export const EFFORT_BUDGET_TOKENS = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24_576,
  xhigh: 32_768,
  max: 65_536,
} as const;

export function resolveThinking(call: UpstreamCall): AnthropicThinkingConfig | undefined {
  const reasoning = call.request.reasoning;
  if (reasoning === undefined || !call.model.features.includes("reasoning")) return undefined;
  if (reasoning.enabled === false || reasoning.effort === "none") return undefined;
  const requested =
    reasoning.budgetTokens !== undefined || reasoning.effort !== undefined || reasoning.enabled === true;
  if (!requested) return undefined;
  if (hasActiveToolLoopWithoutThinking(call.request.messages, call.upstreamModel)) return undefined;

  const maxTokens = call.maxOutputTokens;
  if (reasoning.budgetTokens !== undefined) {
    const budget = reasoning.budgetTokens;
    if (budget < MIN_THINKING_BUDGET_TOKENS) {
      throw GatewayError.invalidRequest(
        `thinking.budget_tokens must be at least ${MIN_THINKING_BUDGET_TOKENS} (got ${budget})`,
        "thinking.budget_tokens",
      );
    }
    if (budget >= maxTokens && !hasInterleavedThinkingBeta(call.request.anthropicBeta)) {
      throw GatewayError.invalidRequest(
        `thinking.budget_tokens (${budget}) must be less than max_tokens (${maxTokens}): ` +
          "thinking counts towards max_tokens",
        "thinking.budget_tokens",
      );
    }
    return { type: "enabled", budget_tokens: budget };
  }

  const effort = reasoning.effort ?? "high";
  const budget = Math.min(EFFORT_BUDGET_TOKENS[effort], maxTokens - 1);
  if (budget < MIN_THINKING_BUDGET_TOKENS) {
    throw GatewayError.invalidRequest(
      `Reasoning on this model needs an output cap above ${MIN_THINKING_BUDGET_TOKENS} tokens ` +
        `(max_tokens is ${maxTokens}); raise it or turn reasoning off`,
      "max_tokens",
    );
  }
  return { type: "enabled", budget_tokens: budget };
}

/**
 * True when tool results follow the last assistant turn and that turn carries no thinking this
 * upstream would accept (see the module comment).
 */
function hasActiveToolLoopWithoutThinking(messages: CanonicalMessage[], upstreamModel: string): boolean {
  let lastAssistant = -1;
  messages.forEach((message, index) => {
    if (message.role === "assistant") lastAssistant = index;
  });
  if (lastAssistant === -1) return false;
  const loopActive = messages.slice(lastAssistant + 1).some((message) => message.role === "tool");
  if (!loopActive) return false;
  const assistant = messages[lastAssistant];
  if (assistant.role !== "assistant") return false;
  return !assistant.content.some(
    (part) =>
      part.type === "reasoning" &&
      isStateForUpstream(part.providerState, PROVIDER_KIND, upstreamModel) &&
      (part.providerState.signature !== undefined || part.providerState.redactedData !== undefined),
  );
}

function hasInterleavedThinkingBeta(betas: string[] | undefined): boolean {
  return (betas ?? []).some((value) =>
    value.split(",").some((beta) => beta.trim().startsWith("interleaved-thinking-")),
  );
}
