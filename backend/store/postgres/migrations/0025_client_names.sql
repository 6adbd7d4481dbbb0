-- Schema version 25: a client's display name and labels (issue 58: 2),
-- which operators find clients by, within a workspace too. name_key is the name folded
-- (contract.FoldName), compared by its bytes, whose index serves a search
-- by a name's prefix as a range, a page at a time in (name_key, id)
-- order. labels is the client's labels as JSON, read with the client;
-- client_labels holds them again a row each, with the client's creation
-- time and folded name, whose indexes serve a search by label a page at a
-- time in the list's own order (created_at, id), and by label and name
-- prefix in name order. client_id has clients.id's collation, so that
-- the join reaches clients by its primary key. As in SQLite's version 25.
ALTER TABLE clients
    ADD COLUMN name     text              NOT NULL DEFAULT '',
    ADD COLUMN name_key text COLLATE "C"  NOT NULL DEFAULT '',
    ADD COLUMN labels   text              NOT NULL DEFAULT '{}';
CREATE INDEX clients_name ON clients (name_key, id COLLATE "C");
CREATE INDEX clients_workspace_name ON clients (workspace_id, name_key, id COLLATE "C");

CREATE TABLE client_labels (
    client_id  text             NOT NULL REFERENCES clients (id),
    key        text COLLATE "C" NOT NULL,
    value      text COLLATE "C" NOT NULL,
    created_at timestamptz      NOT NULL,
    name_key   text COLLATE "C" NOT NULL,
    PRIMARY KEY (client_id, key)
);
CREATE INDEX client_labels_search ON client_labels (key, value, created_at, client_id);
CREATE INDEX client_labels_name ON client_labels (key, value, name_key, client_id);
