-- Budget alerts (docs/limits.md, "Budget alerts"). New tables only: instances of the previous
-- version, still running during a rolling upgrade, read and write none of them.

-- A key's thresholds, in percent of each of its spend limits (daily, monthly, total).
CREATE TABLE key_alert_thresholds (
  api_key_id TEXT PRIMARY KEY,
  thresholds INTEGER[] NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Where a workspace's alerts go, the secret their bodies are signed with, and the thresholds of its
-- keys that have none of their own (NULL: only keys with their own thresholds alert).
CREATE TABLE workspace_alert_webhooks (
  workspace_id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  thresholds INTEGER[],
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One row per threshold crossed per window: the claim that makes an alert go out once, whichever
-- instance settles the request that crossed it (INSERT … ON CONFLICT DO NOTHING).
CREATE TABLE alert_claims (
  api_key_id TEXT NOT NULL,
  spend_window TEXT NOT NULL,
  window_start TIMESTAMPTZ NOT NULL,
  threshold INTEGER NOT NULL,
  workspace_id TEXT NOT NULL,
  spent_micro_usd BIGINT NOT NULL,
  limit_micro_usd BIGINT NOT NULL,
  claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (api_key_id, spend_window, window_start, threshold)
);

-- Every delivery attempt of an alert, newest listed first per workspace.
CREATE TABLE alert_deliveries (
  id TEXT PRIMARY KEY,
  alert_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  api_key_id TEXT NOT NULL,
  spend_window TEXT NOT NULL,
  window_start TIMESTAMPTZ NOT NULL,
  threshold INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  url TEXT NOT NULL,
  status_code INTEGER,
  error TEXT,
  delivered BOOLEAN NOT NULL,
  duration_ms INTEGER NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX alert_deliveries_workspace_idx ON alert_deliveries (workspace_id, created_at);
