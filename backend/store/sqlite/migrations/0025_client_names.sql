-- Schema version 25: a client's display name and labels (issue 58: 2),
-- which operators find clients by, within a workspace too. name_key is the name folded
-- (contract.FoldName), compared by its bytes (SQLite's BINARY), whose
-- index serves a search by a name's prefix as a range, a page at a time
-- in (name_key, id) order. labels is the client's labels as JSON, read
-- with the client; client_labels holds them again a row each, with the
-- client's creation time and folded name, whose indexes serve a search by
-- label a page at a time in the list's own order (created_at, id), and by
-- label and name prefix in name order. As in PostgreSQL's version 25.
ALTER TABLE clients ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
CREATE INDEX clients_name ON clients (name_key, id);
CREATE INDEX clients_workspace_name ON clients (workspace_id, name_key, id);

CREATE TABLE client_labels (
    client_id  TEXT    NOT NULL REFERENCES clients (id),
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    name_key   TEXT    NOT NULL,
    PRIMARY KEY (client_id, key)
) WITHOUT ROWID;
CREATE INDEX client_labels_search ON client_labels (key, value, created_at, client_id);
CREATE INDEX client_labels_name ON client_labels (key, value, name_key, client_id);
