-- Schema version 6: the keys of the installation's keyed hashes, as in
-- PostgreSQL's version 6. A client secret is kept as an HMAC-SHA-256 under
-- the key named "client-secrets" (package credential); the first process
-- that needs a key makes it. secret is the key in hex.
CREATE TABLE hash_keys (
    name       TEXT   PRIMARY KEY,
    secret     TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
