-- Per-key spend limits and rate limit, and the audit log of limit changes.
-- Limits are BIGINT micro-USD like every other amount; NULL means "no limit".

ALTER TABLE api_keys
  ADD COLUMN daily_limit_micro_usd BIGINT CHECK (daily_limit_micro_usd >= 0),
  ADD COLUMN monthly_limit_micro_usd BIGINT CHECK (monthly_limit_micro_usd >= 0),
  ADD COLUMN total_limit_micro_usd BIGINT CHECK (total_limit_micro_usd >= 0),
  -- NULL: the config's limits.default_requests_per_minute applies (unlimited when unset).
  ADD COLUMN requests_per_minute INTEGER CHECK (requests_per_minute > 0),
  -- Start of the current total-spend window: the last manual reset; NULL = since the key exists.
  ADD COLUMN total_spend_reset_at TIMESTAMPTZ;

-- Spend of a key in a window is SUM(cost_micro_usd) over its generations admitted in that window;
-- the INCLUDE makes that an index-only scan (counters are seeded and audited from it).
CREATE INDEX generations_key_created_idx ON generations (api_key_id, created_at) INCLUDE (cost_micro_usd);

CREATE TABLE audit_log (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- 'key.limits_updated', 'key.total_reset'
  action TEXT NOT NULL,
  -- Who did it, as given to the CLI (--actor) or the admin API.
  actor TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  -- No foreign key: the log outlives purged playground keys.
  api_key_id TEXT,
  -- Before/after values; money as decimal strings of micro-USD.
  details JSONB NOT NULL DEFAULT '{}'::jsonb,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX audit_log_key_created_idx ON audit_log (api_key_id, created_at);
