-- Schema version 26: the people who used the Admin API, one row per
-- certificate (by its serial, hex): the name and role it names, when a
-- backend first and last served it. A backend writes a certificate's row
-- at most about once a minute, so that reading who used the API costs the
-- requests nothing. As in PostgreSQL's version 26.
CREATE TABLE people (
    serial     TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
) WITHOUT ROWID;
