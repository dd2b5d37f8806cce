-- Playground keys: one-time keys minted by the platform application for a
-- signed-in user. Each is an ordinary api_keys row (source 'playground' or 'chat', expires_at set),
-- so billing, attribution and every admission check treat it like any key; this side table adds
-- what only one-time keys have: who it was minted for and whether it has been used.
-- Hard purge at expiry deletes the api_keys row and, by the cascade, this row; generations keep
-- their api_key_id (that column has no foreign key for exactly this reason).

CREATE TABLE playground_keys (
  key_id TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  user_id TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('playground', 'chat')),
  -- The database clock is the only clock: created_at drives the mint rate limit, expires_at the TTL.
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  expires_at TIMESTAMPTZ NOT NULL,
  -- Set by the single atomic UPDATE that admits the key's one request.
  consumed_at TIMESTAMPTZ
);

-- The mint rate limit counts a user's recent mints.
CREATE INDEX playground_keys_user_created_idx ON playground_keys (user_id, created_at);

-- The purge finds expired one-time keys without scanning ordinary keys.
CREATE INDEX api_keys_one_time_expiry_idx ON api_keys (expires_at) WHERE source <> 'api';
