/**
 * What distinguishes the Chat Completions hosts one adapter serves, as data. The adapter never
 * branches on a kind's name; it reads these fields (and the per-host `ProviderConfig.quirks`).
 */
import type { ProviderKind } from "../../catalog/types.js";
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import { OPENAI_INPUT_RULES, UNKNOWN_HOST_INPUT_RULES } from "./input-rules.js";

export interface ChatDialect {
  /** The provider kind the adapter registers under. */
  kind: ProviderKind;
  /**
   * OpenAI's own rules for models with the catalog feature `reasoning` (see
   * `openai-reasoning-rules.ts`): sampling parameters they reject are left out, system text goes
   * as a `developer` message, and `reasoning_effort` / `verbosity` are sent to them only (other
   * OpenAI models reject both).
   */
  appliesOpenAiReasoningRules: boolean;
  /** The field that carries the caller's end-user id (`user` is deprecated at OpenAI). */
  userField: "user" | "safety_identifier";
  /** `top_k`, `min_p`, `top_a`, `repetition_penalty`: vLLM/OpenRouter extensions OpenAI rejects. */
  sendsExtendedSampling: boolean;
  /**
   * Replayed assistant turns carry their reasoning text in the non-standard `reasoning` field
   * (OpenRouter, vLLM). OpenAI's Chat API has no such field and returns no reasoning text.
   */
  sendsReasoningText: boolean;
  /** What the host bills for input: OpenAI's rules, or those of an unknown host (input-rules.ts). */
  inputRules: UpstreamInputRules;
  /**
   * The host reads PDF `file` parts itself. OpenAI's does; an unknown host is not assumed to (most
   * serve text and image models only), so its routes get the PDF's text from the gateway.
   */
  readsPdf: boolean;
}

/** Any host speaking OpenAI Chat Completions: forward what the caller asked for. */
export const OPENAI_COMPATIBLE_DIALECT: ChatDialect = {
  kind: "openai-compatible",
  appliesOpenAiReasoningRules: false,
  userField: "user",
  sendsExtendedSampling: true,
  sendsReasoningText: true,
  inputRules: UNKNOWN_HOST_INPUT_RULES,
  readsPdf: false,
};

/** OpenAI's own Chat Completions API. */
export const OPENAI_CHAT_DIALECT: ChatDialect = {
  kind: "openai-chat",
  appliesOpenAiReasoningRules: true,
  userField: "safety_identifier",
  sendsExtendedSampling: false,
  sendsReasoningText: false,
  inputRules: OPENAI_INPUT_RULES,
  readsPdf: true,
};
