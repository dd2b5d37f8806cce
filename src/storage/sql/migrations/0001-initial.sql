-- Initial schema. Money is BIGINT micro-USD; every balance change has a ledger entry, so
-- workspaces.balance_micro_usd always equals the sum of that workspace's ledger_entries.amount_micro_usd.

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  balance_micro_usd BIGINT NOT NULL DEFAULT 0,
  invoicing BOOLEAN NOT NULL DEFAULT FALSE,
  locked BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  name TEXT NOT NULL DEFAULT '',
  -- SHA-256 hex of the key material; the material itself is never stored.
  key_hash TEXT NOT NULL UNIQUE,
  display TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'revoked')),
  -- NULL: every model allowed.
  allowed_models TEXT[],
  expires_at TIMESTAMPTZ,
  member_id TEXT,
  source TEXT NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'playground', 'chat')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX api_keys_workspace_created_idx ON api_keys (workspace_id, created_at);

CREATE TABLE generations (
  -- The request id.
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  -- No foreign key: playground keys are hard-purged while their usage records stay.
  api_key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  ingress_format TEXT NOT NULL CHECK (ingress_format IN ('chat_completions', 'responses', 'vendor_messages')),
  source TEXT NOT NULL CHECK (source IN ('api', 'playground', 'chat')),
  stream BOOLEAN NOT NULL,
  status TEXT NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'ok', 'error', 'cancelled')),
  error_code TEXT,
  upstream_provider TEXT,
  upstream_model TEXT,
  tokens_prompt INTEGER NOT NULL DEFAULT 0,
  tokens_completion INTEGER NOT NULL DEFAULT 0,
  tokens_reasoning INTEGER NOT NULL DEFAULT 0,
  tokens_cached_prompt INTEGER NOT NULL DEFAULT 0,
  tokens_cache_write INTEGER NOT NULL DEFAULT 0,
  cost_micro_usd BIGINT NOT NULL DEFAULT 0,
  -- {"web_search": 10000, ...}: integer micro-USD per server tool.
  tool_costs_micro_usd JSONB NOT NULL DEFAULT '{}'::jsonb,
  latency_ms INTEGER,
  finish_reason TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ
);

CREATE INDEX generations_workspace_created_idx ON generations (workspace_id, created_at);

CREATE TABLE ledger_entries (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  -- UNIQUE: a generation is debited at most once, whatever the caller does.
  generation_id TEXT UNIQUE REFERENCES generations (id),
  kind TEXT NOT NULL CHECK (kind IN ('credit', 'usage')),
  -- Signed: credits add (or, negative, remove) balance; usage entries are negative.
  amount_micro_usd BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  CHECK ((kind = 'usage') = (generation_id IS NOT NULL))
);

CREATE INDEX ledger_entries_workspace_created_idx ON ledger_entries (workspace_id, created_at);
