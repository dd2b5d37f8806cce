-- The console's activity log filters a workspace's requests by model, by status or by error code,
-- newest first, a page at a time (keyset paging on created_at). Without these, a filter on a model
-- or an error that is rare in a busy workspace walks (workspace_id, created_at) through every
-- other request first. Errors and unfinished requests are few, so those two indexes are partial:
-- a request that succeeds costs one more index entry (the model's), nothing else
-- (docs/decisions/0338-activity-log-paging.md).
CREATE INDEX generations_workspace_model_created_idx ON generations (workspace_id, model, created_at);
CREATE INDEX generations_workspace_status_created_idx ON generations (workspace_id, status, created_at)
  WHERE status <> 'ok';
CREATE INDEX generations_workspace_error_created_idx ON generations (workspace_id, error_code, created_at)
  WHERE error_code IS NOT NULL;
