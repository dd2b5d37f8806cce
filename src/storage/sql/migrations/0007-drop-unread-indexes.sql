-- Two indexes that no query reads, maintained on every usage record: (workspace_id, created_at) on
-- generations and on ledger_entries. Lookups go by id, spend sums and counter seeding by
-- (api_key_id, created_at) (generations_key_created_idx), balances by the workspace row. On PGlite
-- they were ~15 % of the database work of settling a request (measured: batches of 25 records
-- through finish_generations, 14 interleaved rounds, median 76 → 65 µs of CPU per record).
-- A future per-workspace listing or ledger report brings back the index it reads, in its migration.
DROP INDEX generations_workspace_created_idx;
DROP INDEX ledger_entries_workspace_created_idx;
