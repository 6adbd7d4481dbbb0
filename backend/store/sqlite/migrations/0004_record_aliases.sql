-- Schema version 4: the aliases of parsed resources. A parser names the
-- resources of a submission by fullUrl or "Type/id"; the backend gives each
-- a new id and keeps those names, so that a later submission for the same
-- record can refer to a resource of an earlier one. An alias names one
-- resource of a record.
CREATE TABLE record_resource_aliases (
    record_id   TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    alias       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    PRIMARY KEY (record_id, alias)
);
