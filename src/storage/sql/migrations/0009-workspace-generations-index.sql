-- The admin API's per-workspace reports read generations by workspace and time: the latest requests
-- of a workspace, and its usage per day and model over the last weeks. Without this index each of
-- them scans every generation of every workspace. It costs each settled request one more index
-- entry (docs/decisions/0033-usage-report-index.md weighs that against the reports).
CREATE INDEX generations_workspace_created_idx ON generations (workspace_id, created_at);
