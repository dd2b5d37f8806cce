/**
 * The Chat Completions provider adapter (`POST {baseUrl}/chat/completions`). One implementation
 * serves every kind that speaks the format; what differs is data: the {@link ChatDialect} given to
 * {@link createChatCompletionsAdapter} and each provider's `quirks`.
 */

import type { ProviderAdapter } from "../provider-adapter.js";
import { createHttpAdapter, type HttpAdapterOptions } from "../shared/create-http-adapter.js";
import { buildChatCompletionsRequest } from "./build-request.js";
import { type ChatDialect, OPENAI_COMPATIBLE_DIALECT } from "./chat-dialect.js";
import { listChatDropped } from "./list-dropped.js";
import { parseChatCompletionsResponse } from "./parse-response.js";
import { parseChatCompletionsBatches } from "./parse-stream.js";

export type OpenAiCompatibleAdapterOptions = HttpAdapterOptions;

/** Kind `openai-compatible`: any host that speaks OpenAI Chat Completions. */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleAdapterOptions = {}): ProviderAdapter {
  return createChatCompletionsAdapter(OPENAI_COMPATIBLE_DIALECT, options);
}

/** A Chat Completions adapter registered under `dialect.kind` and following its rules. */
export function createChatCompletionsAdapter(
  dialect: ChatDialect,
  options: OpenAiCompatibleAdapterOptions = {},
): ProviderAdapter {
  return createHttpAdapter<undefined>(
    {
      kind: dialect.kind,
      inputRules: dialect.inputRules,
      readsPdf: dialect.readsPdf,
      listDropped: listChatDropped,
      buildRequest: (call, stream) => {
        const { url, headers, body } = buildChatCompletionsRequest(call, { stream, dialect });
        return { url, headers, body, context: undefined };
      },
      parseJson: (json) => parseChatCompletionsResponse(json),
      parseStream: (batches) => parseChatCompletionsBatches(batches),
    },
    options,
  );
}
