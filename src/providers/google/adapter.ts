/**
 * The `google` provider adapter: the Gemini API (`POST {baseUrl}/models/{model}:generateContent`
 * and `:streamGenerateContent?alt=sse`, baseUrl like https://generativelanguage.googleapis.com/v1beta).
 */

import type { ProviderAdapter } from "../provider-adapter.js";
import { createHttpAdapter, type HttpAdapterOptions } from "../shared/create-http-adapter.js";
import { buildGenerateContentRequest } from "./build-request.js";
import type { ChunkParserOptions } from "./create-chunk-parser.js";
import { GOOGLE_PROVIDER_KIND } from "./google-provider-kind.js";
import { GOOGLE_INPUT_RULES } from "./input-rules.js";
import { listGoogleDropped } from "./list-dropped.js";
import { convertJsonBodyToParts, parseGenerateContentResponse } from "./parse-response.js";
import { parseGenerateContentBatches } from "./parse-stream.js";
import { refineGoogleError } from "./refine-google-error.js";

export type GoogleAdapterOptions = HttpAdapterOptions;

export function createGoogleAdapter(options: GoogleAdapterOptions = {}): ProviderAdapter {
  return createHttpAdapter<ChunkParserOptions>(
    {
      kind: GOOGLE_PROVIDER_KIND,
      inputRules: GOOGLE_INPUT_RULES,
      // googleSearch and urlContext take no domain lists, and Gemini models before 3 refuse them
      // beside function declarations.
      nativeServerTools: {
        web_search: {
          allowedDomains: false,
          blockedDomains: false,
          bothDomainLists: false,
          withFunctionTools: false,
        },
        web_fetch: {
          allowedDomains: false,
          blockedDomains: false,
          bothDomainLists: false,
          withFunctionTools: false,
        },
      },
      readsPdf: true,
      listDropped: listGoogleDropped,
      buildRequest: (call, stream) => {
        const { url, headers, body } = buildGenerateContentRequest(call, { stream });
        const context = {
          upstreamModel: call.upstreamModel,
          nativeTools: new Set((call.request.nativeServerTools ?? []).map((tool) => tool.tool)),
        };
        return { url, headers, body, context };
      },
      parseJson: (json, _call, context) => parseGenerateContentResponse(json, context),
      parseStream: (batches, _call, context) => parseGenerateContentBatches(batches, context),
      // `alt=sse` lost on the way: the body is one response or an array of chunks.
      convertJsonToParts: (json, _call, context) => convertJsonBodyToParts(json, context),
      refineSendError: refineGoogleError,
    },
    options,
  );
}
