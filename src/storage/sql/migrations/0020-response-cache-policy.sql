-- The exact response cache's policy (docs/response-cache.md): a time-to-live in seconds for the
-- deterministic requests of a key, or of every key of a workspace that has none of its own. NULL:
-- no policy. The upper bound is the hard ceiling of response_cache.max_ttl_seconds (30 days); the
-- admin service checks the configured one. Nullable columns without a default: instances of the
-- previous version, still running during a rolling upgrade, name their columns and never see these.
ALTER TABLE api_keys ADD COLUMN response_cache_ttl_seconds INTEGER
  CHECK (response_cache_ttl_seconds BETWEEN 1 AND 2592000);
ALTER TABLE workspaces ADD COLUMN response_cache_ttl_seconds INTEGER
  CHECK (response_cache_ttl_seconds BETWEEN 1 AND 2592000);
