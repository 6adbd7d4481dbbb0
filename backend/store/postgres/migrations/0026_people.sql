-- Schema version 26: the people who used the Admin API, one row per
-- certificate (by its serial, hex): the name and role it names, when a
-- backend first and last served it. A backend writes a certificate's row
-- at most about once a minute, so that reading who used the API costs the
-- requests nothing. As in SQLite's version 26.
CREATE TABLE people (
    serial     text        PRIMARY KEY,
    name       text        NOT NULL,
    role       text        NOT NULL,
    first_seen timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL
);
