-- The ledger's two foreign keys cost a large share of the database work of settling a request
-- (each is a trigger running a locking lookup per row; docs/decisions/0013-no-foreign-keys-on-ledger.md)
-- and guard nothing the writes do not already guarantee:
-- - a usage line is written only by finish_generations / finish (generation-repository.ts) from
--   the generation row the same statement or transaction just wrote, whose own foreign key
--   (generations.workspace_id, kept) proves the workspace exists;
-- - a credit line only by workspace create/credit (workspace-repository.ts), right after inserting
--   or updating that workspace row in the same transaction;
-- - nothing ever deletes a workspace or a generation.
-- UNIQUE (generation_id), which makes a settlement count once, stays.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_workspace_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_generation_id_fkey;
