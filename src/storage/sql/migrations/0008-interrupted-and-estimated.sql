-- Every admitted request ends with one final record, also when its instance dies mid-request:
-- - status 'interrupted': settled by another (or the restarted) instance, not by the one that ran it;
-- - estimated_input_tokens: the admission's estimate of the prompt, kept with the in-progress record
--   so the instance that settles an interrupted one knows what the prompt cost (NULL on final rows
--   written in one go, which never need it);
-- - usage_estimated: the token counts (and so the cost) are the gateway's estimate, not usage the
--   upstream reported (it reported none, or the stream ended before its final usage);
-- - an index of what is still in progress, oldest first, for the sweep that finds interrupted
--   records. Partial: final rows (nearly all of them) have no entry.
-- The CHECK is replaced NOT VALID: existing rows satisfy the old, narrower one, so they need no scan.
ALTER TABLE generations DROP CONSTRAINT generations_status_check;
ALTER TABLE generations ADD CONSTRAINT generations_status_check
  CHECK (status IN ('in_progress', 'ok', 'error', 'cancelled', 'interrupted')) NOT VALID;
ALTER TABLE generations
  ADD COLUMN estimated_input_tokens INTEGER CHECK (estimated_input_tokens >= 0),
  ADD COLUMN usage_estimated BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX generations_in_progress_idx ON generations (created_at) WHERE status = 'in_progress';

-- finish_generations(...) with one more column: usage_estimated. An overload, as in 0005: instances
-- of the previous version, still running during a rolling upgrade, keep calling the 22-argument one.
CREATE FUNCTION finish_generations(
  p_id TEXT[], p_workspace_id TEXT[], p_api_key_id TEXT[], p_model TEXT[], p_ingress_format TEXT[],
  p_source TEXT[], p_stream BOOLEAN[], p_created_at TIMESTAMPTZ[],
  p_status TEXT[], p_error_code TEXT[], p_upstream_provider TEXT[], p_upstream_model TEXT[],
  p_tokens_prompt INTEGER[], p_tokens_completion INTEGER[], p_tokens_reasoning INTEGER[],
  p_tokens_cached_prompt INTEGER[], p_tokens_cache_write INTEGER[],
  p_cost_micro_usd BIGINT[], p_tool_costs TEXT[], p_latency_ms INTEGER[], p_finish_reason TEXT[],
  p_finished_at TIMESTAMPTZ[], p_usage_estimated BOOLEAN[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH input AS (
    SELECT * FROM unnest(
      p_id, p_workspace_id, p_api_key_id, p_model, p_ingress_format, p_source, p_stream, p_created_at,
      p_status, p_error_code, p_upstream_provider, p_upstream_model,
      p_tokens_prompt, p_tokens_completion, p_tokens_reasoning, p_tokens_cached_prompt, p_tokens_cache_write,
      p_cost_micro_usd, p_tool_costs, p_latency_ms, p_finish_reason, p_finished_at, p_usage_estimated
    ) AS t(id, workspace_id, api_key_id, model, ingress_format, source, stream, created_at,
      status, error_code, upstream_provider, upstream_model,
      tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached_prompt, tokens_cache_write,
      cost_micro_usd, tool_costs, latency_ms, finish_reason, finished_at, usage_estimated)
  ),
  written AS (
    INSERT INTO generations AS g (id, workspace_id, api_key_id, model, ingress_format, source, stream,
      created_at, status, error_code, upstream_provider, upstream_model,
      tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached_prompt, tokens_cache_write,
      cost_micro_usd, tool_costs_micro_usd, latency_ms, finish_reason, finished_at, usage_estimated)
    SELECT i.id, i.workspace_id, i.api_key_id, i.model, i.ingress_format, i.source, i.stream,
      COALESCE(i.created_at, now()), i.status, i.error_code, i.upstream_provider, i.upstream_model,
      i.tokens_prompt, i.tokens_completion, i.tokens_reasoning, i.tokens_cached_prompt, i.tokens_cache_write,
      i.cost_micro_usd, i.tool_costs::jsonb, i.latency_ms, i.finish_reason, COALESCE(i.finished_at, now()),
      COALESCE(i.usage_estimated, false)
    FROM input i
    ON CONFLICT (id) DO UPDATE SET
      status = EXCLUDED.status, error_code = EXCLUDED.error_code,
      upstream_provider = EXCLUDED.upstream_provider, upstream_model = EXCLUDED.upstream_model,
      tokens_prompt = EXCLUDED.tokens_prompt, tokens_completion = EXCLUDED.tokens_completion,
      tokens_reasoning = EXCLUDED.tokens_reasoning, tokens_cached_prompt = EXCLUDED.tokens_cached_prompt,
      tokens_cache_write = EXCLUDED.tokens_cache_write, cost_micro_usd = EXCLUDED.cost_micro_usd,
      tool_costs_micro_usd = EXCLUDED.tool_costs_micro_usd, latency_ms = EXCLUDED.latency_ms,
      finish_reason = EXCLUDED.finish_reason, finished_at = EXCLUDED.finished_at,
      usage_estimated = EXCLUDED.usage_estimated
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
