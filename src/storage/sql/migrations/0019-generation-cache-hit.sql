-- The exact response cache (docs/response-cache.md): a generation answered from it is billed $0
-- and says so. false on every row written before this migration and on every miss.
ALTER TABLE generations ADD COLUMN cache_hit BOOLEAN NOT NULL DEFAULT false;

-- finish_generations(...) with one more column: cache_hit. An overload, as in 0005, 0008, 0010 and
-- 0012: instances of the previous version, still running during a rolling upgrade, keep calling
-- the 26-argument one (their rows keep the default, false).
CREATE FUNCTION finish_generations(
  p_id TEXT[], p_workspace_id TEXT[], p_api_key_id TEXT[], p_model TEXT[], p_ingress_format TEXT[],
  p_source TEXT[], p_stream BOOLEAN[], p_created_at TIMESTAMPTZ[],
  p_status TEXT[], p_error_code TEXT[], p_upstream_provider TEXT[], p_upstream_model TEXT[],
  p_tokens_prompt INTEGER[], p_tokens_completion INTEGER[], p_tokens_reasoning INTEGER[],
  p_tokens_cached_prompt INTEGER[], p_tokens_cache_write INTEGER[],
  p_cost_micro_usd BIGINT[], p_tool_costs TEXT[], p_latency_ms INTEGER[], p_finish_reason TEXT[],
  p_finished_at TIMESTAMPTZ[], p_usage_estimated BOOLEAN[], p_attempts TEXT[],
  p_session_id TEXT[], p_client TEXT[], p_cache_hit BOOLEAN[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH input AS (
    SELECT * FROM unnest(
      p_id, p_workspace_id, p_api_key_id, p_model, p_ingress_format, p_source, p_stream, p_created_at,
      p_status, p_error_code, p_upstream_provider, p_upstream_model,
      p_tokens_prompt, p_tokens_completion, p_tokens_reasoning, p_tokens_cached_prompt, p_tokens_cache_write,
      p_cost_micro_usd, p_tool_costs, p_latency_ms, p_finish_reason, p_finished_at, p_usage_estimated, p_attempts,
      p_session_id, p_client, p_cache_hit
    ) AS t(id, workspace_id, api_key_id, model, ingress_format, source, stream, created_at,
      status, error_code, upstream_provider, upstream_model,
      tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached_prompt, tokens_cache_write,
      cost_micro_usd, tool_costs, latency_ms, finish_reason, finished_at, usage_estimated, attempts,
      session_id, client, cache_hit)
  ),
  written AS (
    INSERT INTO generations AS g (id, workspace_id, api_key_id, model, ingress_format, source, stream,
      created_at, status, error_code, upstream_provider, upstream_model,
      tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached_prompt, tokens_cache_write,
      cost_micro_usd, tool_costs_micro_usd, latency_ms, finish_reason, finished_at, usage_estimated, attempts,
      session_id, client, cache_hit)
    SELECT i.id, i.workspace_id, i.api_key_id, i.model, i.ingress_format, i.source, i.stream,
      COALESCE(i.created_at, now()), i.status, i.error_code, i.upstream_provider, i.upstream_model,
      i.tokens_prompt, i.tokens_completion, i.tokens_reasoning, i.tokens_cached_prompt, i.tokens_cache_write,
      i.cost_micro_usd, i.tool_costs::jsonb, i.latency_ms, i.finish_reason, COALESCE(i.finished_at, now()),
      COALESCE(i.usage_estimated, false), i.attempts::jsonb,
      i.session_id, i.client, COALESCE(i.cache_hit, false)
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
