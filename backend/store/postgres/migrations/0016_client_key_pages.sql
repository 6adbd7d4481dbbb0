-- Schema version 16: the keys are listed a page at a time in kid order,
-- of a client, a workspace, a status or a workspace's keys of a status,
-- each page read from an index whatever the number of keys (the Admin
-- API's GET /keys). As in SQLite's version 16.
CREATE INDEX client_keys_client_kid ON client_keys (client_id, kid);
CREATE INDEX client_keys_workspace_kid ON client_keys (workspace_id, kid);
CREATE INDEX client_keys_status_kid ON client_keys (status, kid);
CREATE INDEX client_keys_workspace_status_kid ON client_keys (workspace_id, status, kid);
