-- Schema version 4: the aliases of parsed resources, as in SQLite's version
-- 4. A parser names the resources of a submission by fullUrl or "Type/id";
-- the backend gives each a new id and keeps those names, so that a later
-- submission for the same record can refer to a resource of an earlier one.
-- An alias names one resource of a record.
CREATE TABLE record_resource_aliases (
    record_id   text NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    alias       text NOT NULL,
    resource_id text NOT NULL,
    PRIMARY KEY (record_id, alias)
);
