/**
 * The `openai-responses` provider adapter: OpenAI's Responses API (`POST {baseUrl}/responses`),
 * called statelessly (`store: false`, full input every turn, reasoning carried as encrypted
 * content in the canonical reasoning parts' provider state).
 */

import { OPENAI_INPUT_RULES } from "../openai-compatible/input-rules.js";
import type { ProviderAdapter } from "../provider-adapter.js";
import { createHttpAdapter, type HttpAdapterOptions } from "../shared/create-http-adapter.js";
import { buildResponsesRequest } from "./build-request.js";
import { listResponsesDropped } from "./list-dropped.js";
import { parseResponsesResponse, type ResponsesParseContext } from "./parse-response.js";
import { parseResponsesBatches } from "./parse-stream.js";
import { RESPONSES_PROVIDER_KIND } from "./provider-kind.js";

export type OpenAiResponsesAdapterOptions = HttpAdapterOptions;

export function createOpenAiResponsesAdapter(options: OpenAiResponsesAdapterOptions = {}): ProviderAdapter {
  return createHttpAdapter<ResponsesParseContext>(
    {
      kind: RESPONSES_PROVIDER_KIND,
      inputRules: OPENAI_INPUT_RULES,
      // OpenAI's search takes allowed domains only; it has no fetch tool of its own.
      nativeServerTools: {
        web_search: {
          allowedDomains: true,
          blockedDomains: false,
          bothDomainLists: false,
          withFunctionTools: true,
        },
      },
      readsPdf: true,
      listDropped: listResponsesDropped,
      // Built before sending: a request the format cannot express fails without an upstream call.
      buildRequest: (call, stream) => {
        const { url, headers, body } = buildResponsesRequest(call, { stream });
        const context = {
          upstreamModel: call.upstreamModel,
          nativeSearch: (call.request.nativeServerTools ?? []).some((tool) => tool.tool === "web_search"),
        };
        return { url, headers, body, context };
      },
      parseJson: (json, _call, context) => parseResponsesResponse(json, context),
      parseStream: (batches, _call, context) => parseResponsesBatches(batches, context),
    },
    options,
  );
}
