-- The admin API's audit log (GET /internal/admin/audit-log) pages newest first by id, over all
-- workspaces (the primary key serves that), one workspace's entries or one key's. These two indexes
-- make each filtered page an index range scan that starts at the cursor, however deep it is
-- (docs/decisions/0336-audit-log-keyset-paging.md). Audit entries are written by admin actions
-- only, so the extra index entries cost nothing on the request path.
CREATE INDEX audit_log_workspace_id_idx ON audit_log (workspace_id, id);
CREATE INDEX audit_log_key_id_idx ON audit_log (api_key_id, id);
