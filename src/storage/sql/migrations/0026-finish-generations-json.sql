-- finish_generations_json(rows): what finish_generations(...) of 0019 does, with the batch as one
-- jsonb array instead of 27 arrays. The gateway serialises each record's start and outcome once
-- (for Redis, in distributed mode) and the batch reuses those texts, where 27 arrays had to be
-- built and escaped element by element. A new function, not a change: instances of the previous
-- version, still running during a rolling upgrade, keep calling the 27-argument one.
--
-- Each element: {"s": the start, "o": the outcome, "c": created at, "f": finished at}, the times as
-- ISO text or null (now). "s" and "o" use the gateway's field names
-- (GenerationStart and GenerationOutcome in src/engine/generation-record.ts); other fields are
-- ignored. An empty attempts list is stored as NULL, as before.
CREATE FUNCTION finish_generations_json(p_rows JSONB) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH input AS (
    SELECT s.id, s."workspaceId" AS workspace_id, s."apiKeyId" AS api_key_id, s.model,
      s."ingressFormat" AS ingress_format, s.source, s.stream,
      COALESCE((r->>'c')::timestamptz, now()) AS created_at,
      o.status, o."errorCode" AS error_code, o."upstreamProvider" AS upstream_provider,
      o."upstreamModel" AS upstream_model, o."tokensPrompt" AS tokens_prompt,
      o."tokensCompletion" AS tokens_completion, o."tokensReasoning" AS tokens_reasoning,
      o."tokensCachedPrompt" AS tokens_cached_prompt, o."tokensCacheWrite" AS tokens_cache_write,
      o."costMicroUsd" AS cost_micro_usd, COALESCE(o."toolCostsMicroUsd", '{}'::jsonb) AS tool_costs,
      o."latencyMs" AS latency_ms, o."finishReason" AS finish_reason,
      COALESCE((r->>'f')::timestamptz, now()) AS finished_at,
      COALESCE(o."usageEstimated", false) AS usage_estimated,
      NULLIF(o.attempts, '[]'::jsonb) AS attempts,
      s."sessionId" AS session_id, s.client, COALESCE(o."cacheHit", false) AS cache_hit
    FROM jsonb_array_elements(p_rows) AS r,
      jsonb_to_record(r->'s') AS s(id TEXT, "workspaceId" TEXT, "apiKeyId" TEXT, model TEXT,
        "ingressFormat" TEXT, source TEXT, stream BOOLEAN, "sessionId" TEXT, client TEXT),
      jsonb_to_record(r->'o') AS o(status TEXT, "errorCode" TEXT, "upstreamProvider" TEXT,
        "upstreamModel" TEXT, "tokensPrompt" INTEGER, "tokensCompletion" INTEGER,
        "tokensReasoning" INTEGER, "tokensCachedPrompt" INTEGER, "tokensCacheWrite" INTEGER,
        "costMicroUsd" BIGINT, "toolCostsMicroUsd" JSONB, "latencyMs" INTEGER, "finishReason" TEXT,
        "usageEstimated" BOOLEAN, attempts JSONB, "cacheHit" BOOLEAN)
  ),
  written AS (
    INSERT INTO generations AS g (id, workspace_id, api_key_id, model, ingress_format, source, stream,
      created_at, status, error_code, upstream_provider, upstream_model,
      tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached_prompt, tokens_cache_write,
      cost_micro_usd, tool_costs_micro_usd, latency_ms, finish_reason, finished_at, usage_estimated, attempts,
      session_id, client, cache_hit)
    SELECT i.id, i.workspace_id, i.api_key_id, i.model, i.ingress_format, i.source, i.stream,
      i.created_at, i.status, i.error_code, i.upstream_provider, i.upstream_model,
      i.tokens_prompt, i.tokens_completion, i.tokens_reasoning, i.tokens_cached_prompt, i.tokens_cache_write,
      i.cost_micro_usd, i.tool_costs, i.latency_ms, i.finish_reason, i.finished_at,
      i.usage_estimated, i.attempts, i.session_id, i.client, i.cache_hit
    FROM input i
    ON CONFLICT (id) DO UPDATE SET
      status = EXCLUDED.status, error_code = EXCLUDED.error_code,
      upstream_provider = EXCLUDED.upstream_provider, upstream_model = EXCLUDED.upstream_model,
      tokens_prompt = EXCLUDED.tokens_prompt, tokens_completion = EXCLUDED.tokens_completion,
      tokens_reasoning = EXCLUDED.tokens_reasoning, tokens_cached_prompt = EXCLUDED.tokens_cached_prompt,
      tokens_cache_write = EXCLUDED.tokens_cache_write, cost_micro_usd = EXCLUDED.cost_micro_usd,
      tool_costs_micro_usd = EXCLUDED.tool_costs_micro_usd, latency_ms = EXCLUDED.latency_ms,
      finish_reason = EXCLUDED.finish_reason, finished_at = EXCLUDED.finished_at,
      usage_estimated = EXCLUDED.usage_estimated, attempts = EXCLUDED.attempts,
      session_id = COALESCE(g.session_id, EXCLUDED.session_id), client = COALESCE(g.client, EXCLUDED.client),
      cache_hit = EXCLUDED.cache_hit
    WHERE g.status = 'in_progress'
    RETURNING g.id, g.workspace_id, g.cost_micro_usd
  ),
  debited AS (
    INSERT INTO ledger_entries (workspace_id, generation_id, kind, amount_micro_usd)
    SELECT w.workspace_id, w.id, 'usage', -w.cost_micro_usd FROM written w WHERE w.cost_micro_usd > 0
    ON CONFLICT (generation_id) DO NOTHING
    RETURNING workspace_id, amount_micro_usd
  )
  UPDATE workspaces ws SET balance_micro_usd = ws.balance_micro_usd + d.total
  FROM (SELECT workspace_id, sum(amount_micro_usd) AS total FROM debited GROUP BY workspace_id) d
  WHERE ws.id = d.workspace_id;
END
$$;
