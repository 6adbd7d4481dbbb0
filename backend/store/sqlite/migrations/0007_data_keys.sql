-- Schema version 7: the store's data key (package sealed), wrapped by the
-- keeper, as in PostgreSQL's version 7. The secrets of signing_keys,
-- hash_keys and subscriptions are sealed under it from this version on;
-- the process that first opens the store with a keeper makes the key and
-- seals what an earlier version stored in the clear. slot makes the key
-- one.
CREATE TABLE data_keys (
    id         TEXT   PRIMARY KEY,
    slot       TEXT   NOT NULL UNIQUE CHECK (slot = 'store'),
    wrapped    BLOB   NOT NULL,
    keeper     TEXT   NOT NULL, -- the ID of the keeper that wrapped it
    created_at BIGINT NOT NULL
);
