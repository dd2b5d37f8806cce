/**
 * The `anthropic` provider adapter: Anthropic's Messages API (`POST {baseUrl}/messages`, with
 * `baseUrl` like `https://api.anthropic.com/v1`), and relays that speak it.
 */

import type { ProviderAdapter } from "../provider-adapter.js";
import { createHttpAdapter, type HttpAdapterOptions } from "../shared/create-http-adapter.js";
import { buildAnthropicRequest } from "./build-request.js";
import { ANTHROPIC_INPUT_RULES } from "./input-rules.js";
import { listAnthropicDropped } from "./list-dropped.js";
import { type AnthropicParseContext, parseAnthropicResponse } from "./parse-response.js";
import { parseAnthropicBatches } from "./parse-stream.js";

export type AnthropicAdapterOptions = HttpAdapterOptions;

export function createAnthropicAdapter(options: AnthropicAdapterOptions = {}): ProviderAdapter {
  return createHttpAdapter<AnthropicParseContext>(
    {
      kind: "anthropic",
      inputRules: ANTHROPIC_INPUT_RULES,
      nativeServerTools: {
        // Each tool takes allowed_domains or blocked_domains, never both.
        web_search: {
          allowedDomains: true,
          blockedDomains: true,
          bothDomainLists: false,
          withFunctionTools: true,
        },
        web_fetch: {
          allowedDomains: true,
          blockedDomains: true,
          bothDomainLists: false,
          withFunctionTools: true,
        },
      },
      readsPdf: true,
      listDropped: listAnthropicDropped,
      buildRequest(call, stream) {
        const request = buildAnthropicRequest(call, { stream });
        const context: AnthropicParseContext = {
          upstreamModel: call.upstreamModel,
          nativeTools: new Set((call.request.nativeServerTools ?? []).map((tool) => tool.tool)),
          ...(request.jsonToolName === undefined ? {} : { jsonToolName: request.jsonToolName }),
        };
        return { url: request.url, headers: request.headers, body: request.body, context };
      },
      parseJson: (json, _call, context) => parseAnthropicResponse(json, context),
      parseStream: (batches, _call, context) => parseAnthropicBatches(batches, context),
    },
    options,
  );
}
