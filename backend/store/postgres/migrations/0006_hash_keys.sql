-- Schema version 6: the keys of the installation's keyed hashes, as in
-- SQLite's version 6. A client secret is kept as an HMAC-SHA-256 under the
-- key named "client-secrets" (package credential); the first process that
-- needs a key makes it.
CREATE TABLE hash_keys (
    name       text        PRIMARY KEY,
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL
);
