-- Schema version 14: the fleet as the backends see it, as in PostgreSQL's
-- version 14. Each backend process writes its row every 5 s
-- (fleet_backends), and each edge reports every 5 s (fleet_edges, by its
-- instance id and its certificate's serial number) with the kids it used,
-- whose last use at any edge (client_keys.last_used_at) the report raises
-- without taking a change number: an edge never looks a key up again
-- because it was used. The heartbeats remove the rows not heard from for a
-- day.
ALTER TABLE client_keys ADD COLUMN last_used_at BIGINT;

CREATE TABLE fleet_backends (
    id         TEXT   PRIMARY KEY,
    host       TEXT   NOT NULL,
    version    TEXT   NOT NULL,
    address    TEXT   NOT NULL,
    started_at BIGINT NOT NULL,
    last_seen  BIGINT NOT NULL
) WITHOUT ROWID;

CREATE TABLE fleet_edges (
    id           TEXT   NOT NULL,
    cert_serial  TEXT   NOT NULL,
    cert_name    TEXT   NOT NULL,
    applied_seq  BIGINT NOT NULL,
    last_contact BIGINT NOT NULL,
    source       TEXT   NOT NULL,
    PRIMARY KEY (id, cert_serial)
) WITHOUT ROWID;
