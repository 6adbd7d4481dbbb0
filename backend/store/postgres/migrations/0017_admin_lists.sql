-- Schema version 16: the Admin API lists the sharing grants (by
-- workspace, by client) and the webhook subscriptions of every workspace
-- a page at a time in creation order. As in SQLite's version 16.
CREATE INDEX sharing_grants_created ON sharing_grants (created_at, id);
CREATE INDEX sharing_grants_workspace_created ON sharing_grants (workspace_id, created_at, id);
CREATE INDEX sharing_grants_client_created ON sharing_grants (client_id, created_at, id);
CREATE INDEX subscriptions_created ON subscriptions (created_at, id);
CREATE INDEX subscriptions_workspace_created ON subscriptions (workspace_id, created_at, id);
