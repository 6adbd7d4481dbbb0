-- Schema version 25: a client's display name and labels (issue 58: 2),
-- which operators find clients by. name_key is the name folded
-- (contract.FoldName), compared by its bytes, whose index serves a search
-- by a name's prefix as a range, a page at a time in (name_key, id)
-- order. labels is the client's labels as JSON, read with the client;
-- client_labels holds them again a row each, with the client's creation
-- time, whose index serves a search by label a page at a time in the
-- list's own order (created_at, id). As in SQLite's version 25.
ALTER TABLE clients
    ADD COLUMN name     text              NOT NULL DEFAULT '',
    ADD COLUMN name_key text COLLATE "C"  NOT NULL DEFAULT '',
    ADD COLUMN labels   text              NOT NULL DEFAULT '{}';
CREATE INDEX clients_name ON clients (name_key, id COLLATE "C");

CREATE TABLE client_labels (
    client_id  text COLLATE "C" NOT NULL REFERENCES clients (id),
    key        text COLLATE "C" NOT NULL,
    value      text COLLATE "C" NOT NULL,
    created_at timestamptz      NOT NULL,
    PRIMARY KEY (client_id, key)
);
CREATE INDEX client_labels_search ON client_labels (key, value, created_at, client_id);
