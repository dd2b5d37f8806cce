/** `GET /api/v1/generation?id=`: post-hoc metadata of one request of the caller's workspace (§2.8). */
import { Hono } from "hono";
import { type Authenticator, readBearerToken } from "../../auth/authenticate.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import type { GenerationRecord, Store } from "../../storage/types.js";
import type { AppEnv } from "../app-env.js";
import { createErrorResponse } from "../error-response.js";

export function renderGeneration(record: GenerationRecord) {
  const cost = record.costMicroUsd ?? 0;
  return {
    id: record.id,
    model: record.model,
    ingress_format: record.ingressFormat,
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
  };
}

export function createGenerationLookupRoute(store: Store, authenticator: Authenticator) {
  const app = new Hono<AppEnv>();
  app.get("/api/v1/generation", async (c) => {
    const requestId = c.get("requestId");
    try {
      const caller = await authenticator.authenticate(readBearerToken(c.req.header("authorization")));
      const id = c.req.query("id");
      if (!id) throw GatewayError.invalidRequest("Query parameter id is required", "id");
      const record = await store.generations.get(id, caller.workspace.id);
      if (!record) throw GatewayError.invalidRequest(`No generation with id "${id}" in this workspace`, "id");
      return c.json({ data: renderGeneration(record) });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
    }
  });
  return app;
}
