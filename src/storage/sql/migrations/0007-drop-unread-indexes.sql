-- Two indexes that no query reads, maintained on every usage record: (workspace_id, created_at) on
-- generations and on ledger_entries. Lookups go by id, spend sums and counter seeding by
-- (api_key_id, created_at) (generations_key_created_idx), balances by the workspace row. On PGlite
-- they were a measurable share of the database work of settling a request
-- (docs/decisions/0038-stream-rows-only-final-in-pglite.md).
-- A future per-workspace listing or ledger report brings back the index it reads, in its migration.
DROP INDEX generations_workspace_created_idx;
DROP INDEX ledger_entries_workspace_created_idx;
