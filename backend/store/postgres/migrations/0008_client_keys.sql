-- Schema version 8: the clients' shared encryption keys, which the edges
-- look up by kid (the key plane), as in SQLite's version 8. secret is
-- sealed under the store's data key. seq is the number of the key's last
-- change, taken from key_plane's one row inside the change's transaction:
-- the row's lock orders concurrent changes, so numbers commit in order and
-- an edge that has seen n has seen every change before it. A change also
-- notifies hdc_client_keys (package postgres) with its number.
CREATE TABLE client_keys (
    kid          text        PRIMARY KEY,
    client_id    text        NOT NULL,
    workspace_id text        NOT NULL,
    secret       text        NOT NULL,
    enc          text        NOT NULL, -- the content encryption of its envelopes (A128CBC-HS256)
    status       text        NOT NULL CHECK (status IN ('active', 'retiring', 'retired')),
    created_at   timestamptz NOT NULL,
    retiring_at  timestamptz,
    retired_at   timestamptz,
    seq          bigint      NOT NULL UNIQUE
);
CREATE INDEX client_keys_by_client ON client_keys (client_id, status);

CREATE TABLE key_plane (
    slot text   PRIMARY KEY CHECK (slot = 'seq'),
    seq  bigint NOT NULL
);
INSERT INTO key_plane (slot, seq) VALUES ('seq', 0);
