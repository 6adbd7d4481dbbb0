-- Schema version 14: the fleet as the backends see it, as in SQLite's
-- version 14. Each backend process writes its row every 5 s
-- (fleet_backends), and each edge reports every 5 s (fleet_edges, by its
-- instance id and its certificate's serial number) with the kids it used,
-- whose last use at any edge (client_keys.last_used_at) the report raises
-- without taking a change number and without a notice: an edge never looks
-- a key up again because it was used. The heartbeats remove the rows not
-- heard from for a day.
ALTER TABLE client_keys ADD COLUMN last_used_at timestamptz;

CREATE TABLE fleet_backends (
    id         text        PRIMARY KEY,
    host       text        NOT NULL,
    version    text        NOT NULL,
    address    text        NOT NULL,
    started_at timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL
);

CREATE TABLE fleet_edges (
    id           text        NOT NULL,
    cert_serial  text        NOT NULL,
    cert_name    text        NOT NULL,
    applied_seq  bigint      NOT NULL,
    last_contact timestamptz NOT NULL,
    source       text        NOT NULL,
    PRIMARY KEY (id, cert_serial)
);
