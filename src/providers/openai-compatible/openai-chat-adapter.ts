/**
 * Kind `openai-chat`: OpenAI's own Chat Completions API. The Chat Completions adapter with
 * OpenAI's rules as data ({@link OPENAI_CHAT_DIALECT}): reasoning models (catalog feature
 * `reasoning`) get `developer` instead of `system`, no sampling parameters they reject, and
 * `reasoning_effort`; non-reasoning models get neither `reasoning_effort` nor `verbosity`; the
 * end-user id goes as `safety_identifier`; vLLM-style sampling extensions and reasoning text of
 * replayed turns are not sent. The output cap goes as `max_completion_tokens` (the quirk default;
 * reasoning models reject the legacy `max_tokens`).
 */
import type { ProviderAdapter } from "../provider-adapter.js";
import { createChatCompletionsAdapter, type OpenAiCompatibleAdapterOptions } from "./adapter.js";
import { OPENAI_CHAT_DIALECT } from "./chat-dialect.js";

export function createOpenAiChatAdapter(options: OpenAiCompatibleAdapterOptions = {}): ProviderAdapter {
  return createChatCompletionsAdapter(OPENAI_CHAT_DIALECT, options);
}
