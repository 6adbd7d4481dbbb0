-- Schema version 21: operators' overrides of clients' rate limits and
-- upload quota (issue 50), over the edges' defaults. limits is the JSON of
-- contract.Limits ('{}' once cleared: the row stays so that the clearing
-- is a change of the key plane too); seq is the key plane's number of its
-- last change, read by the edges' change feed with the keys'. As in
-- SQLite's version 21.
CREATE TABLE client_limits (
    client_id  text        PRIMARY KEY REFERENCES clients (id),
    limits     text        NOT NULL,
    seq        bigint      NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX client_limits_seq ON client_limits (seq);
