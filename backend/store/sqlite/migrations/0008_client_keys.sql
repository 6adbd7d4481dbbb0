-- Schema version 8: the clients' shared encryption keys, which the edges
-- look up by kid (the key plane), as in PostgreSQL's version 8. secret is
-- sealed under the store's data key. seq is the number of the key's last
-- change, taken from key_plane's one row inside the change's transaction:
-- an edge follows the changes by number.
CREATE TABLE client_keys (
    kid          TEXT    PRIMARY KEY,
    client_id    TEXT    NOT NULL,
    workspace_id TEXT    NOT NULL,
    secret       TEXT    NOT NULL,
    enc          TEXT    NOT NULL, -- the content encryption of its envelopes (A128CBC-HS256)
    status       TEXT    NOT NULL CHECK (status IN ('active', 'retiring', 'retired')),
    created_at   BIGINT  NOT NULL,
    retiring_at  BIGINT,
    retired_at   BIGINT,
    seq          BIGINT  NOT NULL UNIQUE
) WITHOUT ROWID;
CREATE INDEX client_keys_by_client ON client_keys (client_id, status);

CREATE TABLE key_plane (
    slot TEXT   PRIMARY KEY CHECK (slot = 'seq'),
    seq  BIGINT NOT NULL
);
INSERT INTO key_plane (slot, seq) VALUES ('seq', 0);
