/**
 * Canonical usage → the messages `usage` object, shared by the non-streaming response
 * and the stream's `message_delta`.
 *
 * Anthropic's `input_tokens` is only the uncached remainder: cache reads and cache writes are
 * reported beside it, not inside it. The canonical `inputTokens` counts all
 * of them, so they are subtracted here; a client adding the three fields gets the full prompt back
 * and is never billed twice for cached tokens.
 *
 * `server_tool_use` counts the searches and fetches the run executed (failed ones included, as
 * Anthropic counts them), present whenever the request activated a server tool; the other tools
 * have no counter in this format.
 */
import type { CanonicalUsage, ServerToolCounts } from "../../canonical/index.js";

export interface MessagesServerToolUsage {
  web_search_requests: number;
  web_fetch_requests: number;
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  server_tool_use?: MessagesServerToolUsage;
}

export function encodeMessagesUsage(
  usage: CanonicalUsage,
  serverToolCalls?: ServerToolCounts,
): MessagesUsage {
  const cacheCreation = usage.cacheWriteTokens + usage.cacheWrite1hTokens;
  const encoded: MessagesUsage = {
    // Clamped: an upstream that reports cache counters outside its prompt total must not yield < 0.
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - cacheCreation),
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
    cache_creation_input_tokens: cacheCreation,
  };
  if (serverToolCalls !== undefined) {
    encoded.server_tool_use = {
      web_search_requests: serverToolCalls.web_search ?? 0,
      web_fetch_requests: serverToolCalls.web_fetch ?? 0,
    };
  }
  return encoded;
}
