-- Schema version 7: the store's data key (package sealed), wrapped by the
-- keeper, as in SQLite's version 7. The secrets of signing_keys,
-- hash_keys and subscriptions are sealed under it from this version on;
-- the process that first opens the store with a keeper makes the key and
-- seals what an earlier version stored in the clear. slot makes the key
-- one.
CREATE TABLE data_keys (
    id         text        PRIMARY KEY,
    slot       text        NOT NULL UNIQUE CHECK (slot = 'store'),
    wrapped    bytea       NOT NULL,
    keeper     text        NOT NULL, -- the ID of the keeper that wrapped it
    created_at timestamptz NOT NULL
);
