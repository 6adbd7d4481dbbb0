-- Schema version 22: the private receivers operators grant workspaces
-- (issue 56): an address prefix (masked, as text) and a port (0: every
-- port) that one workspace's webhooks may reach although the SSRF guard
-- refuses it to every other. A revoked grant keeps its row, which its
-- audit records name; one grant of a prefix and port is in force per
-- workspace. As in PostgreSQL's version 22.
CREATE TABLE webhook_destinations (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id),
    prefix       TEXT    NOT NULL,
    port         INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),
    created_at   BIGINT  NOT NULL,
    created_by   TEXT    NOT NULL,
    revoked_at   BIGINT,
    revoked_by   TEXT
);
CREATE UNIQUE INDEX webhook_destinations_in_force ON webhook_destinations (workspace_id, prefix, port)
    WHERE revoked_at IS NULL;
CREATE INDEX webhook_destinations_workspace ON webhook_destinations (workspace_id, created_at, id);
