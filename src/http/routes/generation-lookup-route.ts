/**
 * `GET /api/v1/generation?id=`: post-hoc metadata of one request of the caller's workspace.
 * `id` is the request id (`X-Request-Id`) or an id the SDKs hand back, which carries it after a
 * prefix: `gen-` (chat completion), `resp_` (response), `msg_` (message). The key may come in
 * `Authorization: Bearer` or, as the Anthropic SDK sends it, in `x-api-key`.
 */
import { z } from "zod";
import { type Authenticator, readBearerOrApiKey } from "../../auth/authenticate.js";
import { readIngressFormatName } from "../../canonical/ingress-format-name.js";
import type { GenerationRecord } from "../../engine/generation-record.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import type { Store } from "../../storage/store.js";
import { generationSchema } from "../openapi/openapi-schemas.js";
import { BEARER_OR_API_KEY, COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import { classifyCaught, createErrorResponse } from "../router/error-response.js";
import { REQUEST_ID_PATTERN } from "../router/request-id.js";
import type { RouteDefinition } from "../router/route-definition.js";

const PREFIXED_ID = new RegExp(`^(?:gen-|resp_|msg_)(${REQUEST_ID_PATTERN.source})$`);

/** The request id inside a response id (`gen-…`, `resp_…`, `msg_…`); any other text as it is. */
export function readRequestId(id: string): string {
  return PREFIXED_ID.exec(id)?.[1] ?? id;
}

export function renderGeneration(record: GenerationRecord) {
  const cost = record.costMicroUsd ?? 0;
  return {
    id: record.id,
    model: record.model,
    // A record written before the rename (a journal line, an in-progress value) says `vendor_messages`.
    ingress_format: readIngressFormatName(record.ingressFormat),
    source: record.source,
    status: record.status,
    stream: record.stream,
    upstream_provider: record.upstreamProvider ?? null,
    upstream_model: record.upstreamModel ?? null,
    tokens_prompt: record.tokensPrompt ?? 0,
    tokens_completion: record.tokensCompletion ?? 0,
    tokens_reasoning: record.tokensReasoning ?? 0,
    tokens_cached_prompt: record.tokensCachedPrompt ?? 0,
    tokens_cache_write: record.tokensCacheWrite ?? 0,
    total_cost: convertMicroUsdToUsd(cost),
    cost_micro_usd: String(cost),
    tool_costs_micro_usd: Object.fromEntries(
      Object.entries(record.toolCostsMicroUsd ?? {}).map(([tool, micro]) => [tool, String(micro)]),
    ),
    latency_ms: record.latencyMs ?? null,
    finish_reason: record.finishReason ?? null,
    error_code: record.errorCode ?? null,
    created_at: record.createdAt.toISOString(),
    finished_at: record.finishedAt ? record.finishedAt.toISOString() : null,
    // Beyond the contract's fields: the token counts (and the cost) are the gateway's estimate.
    usage_estimated: record.usageEstimated === true,
    // Beyond the contract's fields: every upstream call, in order; only the `ok` one was billed.
    attempts: (record.attempts ?? []).map((attempt) => ({
      provider: attempt.provider,
      model: attempt.model,
      upstream_model: attempt.upstreamModel,
      outcome: attempt.outcome,
      latency_ms: attempt.latencyMs,
      dropped: attempt.dropped ?? [],
    })),
    // Beyond the contract's fields: what the serving route's upstream went without (X-Hi-Dropped).
    dropped: record.attempts?.findLast((attempt) => attempt.outcome === "ok")?.dropped ?? [],
    // Beyond the contract's fields: the agent client's session header and its user agent's product.
    session_id: record.sessionId ?? null,
    client: record.client ?? null,
    // Answered from the exact response cache, at no cost (docs/response-cache.md).
    cache_hit: record.cacheHit === true,
  };
}

/** Generation ids are request ids, URL-safe ASCII (base64url, with a type prefix for the SDKs' forms). */
const POSSIBLE_GENERATION_ID = /^[A-Za-z0-9_-]{1,200}$/;

function isPossibleGenerationId(id: string): boolean {
  return POSSIBLE_GENERATION_ID.test(id);
}

const querySchema = z.object({
  id: z.string().meta({
    description:
      "The request id (X-Request-Id), or the response id that carries it: gen-<id>, resp_<id> or msg_<id>",
  }),
});

export function createGenerationLookupRoute(store: Store, authenticator: Authenticator): RouteDefinition {
  return {
    method: "GET",
    path: "/api/v1/generation",
    summary: "Metadata of one request, by request id",
    description: "Authenticate with Authorization: Bearer or x-api-key.",
    security: BEARER_OR_API_KEY,
    request: { query: querySchema },
    responses: { 200: jsonResponse(generationSchema, "Generation metadata"), ...COMMON_ERRORS },
    handler: async (c) => {
      const requestId = c.requestId;
      try {
        const caller = await authenticator.authenticate(readBearerOrApiKey(c.req.headers));
        const id = c.req.query("id");
        if (!id) throw GatewayError.invalidRequest("Query parameter id is required", "id");
        // Text no generation id can be (a NUL, which PostgreSQL cannot even compare; 10 KB of
        // anything) is answered like an unknown id, without a database round trip.
        const generationId = readRequestId(id);
        const record = isPossibleGenerationId(generationId)
          ? await store.generations.get(generationId, caller.workspace.id)
          : null;
        if (!record)
          throw GatewayError.invalidRequest(`No generation with id "${id}" in this workspace`, "id");
        return c.json({ data: renderGeneration(record) });
      } catch (thrown) {
        const error = classifyCaught(thrown, requestId, c.logger);
        return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
      }
    },
  };
}
